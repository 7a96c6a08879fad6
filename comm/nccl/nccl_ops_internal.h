// One collective as NCCL calls on a stream, and the bytes a rank sends for it. Even splits
// map to ncclReduceScatter / ncclAllGather; uneven ones (count not a multiple of the world
// size, Communicator's shard_range) to one ncclReduce / ncclBroadcast per shard, rooted at
// its owner, in one group. all_gather and broadcast move bytes, so any dtype works.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "comm/gloo/collective_request.h"
#include "comm/gloo/op_counters.h"

namespace zt::comm {

// Enqueues `request` (not a barrier) on `stream`; throws CommError naming the NCCL call
// and `where`. May leave the communicator ncclInProgress (non-blocking): the caller polls.
void issue_nccl_op(const CollectiveRequest& request, ncclComm_t comm, cudaStream_t stream, int rank,
                   int world_size, const std::string& where);

// Payload bytes this rank sends to each peer, counted as the Gloo backend's algorithms do:
// to the right-hand neighbour a reduce-scatter's count - shard(r) elements, an all-gather's
// count - shard(r+1), an all-reduce's both, a broadcast's whole buffer but on the rank
// before the root in the ring (NCCL's ring broadcast); an all-to-all's chunk to every other
// peer; a barrier nothing.
std::vector<PeerBytes> nccl_bytes_sent(const CollectiveRequest& request, int rank, int world_size);

ncclDataType_t nccl_dtype(DType dtype);
ncclRedOp_t nccl_reduce_op(ReduceOp op);

}  // namespace zt::comm
