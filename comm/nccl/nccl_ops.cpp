// The NCCL calls of each collective, and their byte counts.
#include <cstddef>

#include "comm/nccl/nccl_errors_internal.h"
#include "comm/nccl/nccl_library_internal.h"
#include "comm/nccl/nccl_ops_internal.h"
#include "core/error.h"

namespace zt::comm {
namespace {

std::byte* at_element(const Tensor& tensor, std::int64_t element) {
  return static_cast<std::byte*>(tensor.data()) +
         static_cast<std::size_t>(element) * dtype_size(tensor.dtype());
}

std::size_t as_count(std::int64_t count) { return static_cast<std::size_t>(count); }

void reduce_scatter(const CollectiveRequest& request, ncclComm_t comm, cudaStream_t stream,
                    int rank, int world_size, const std::string& where) {
  const Tensor& input = request.input;
  const std::int64_t count = input.numel();
  const ncclDataType_t dtype = nccl_dtype(input.dtype());
  const ncclRedOp_t op = nccl_reduce_op(request.op);
  if (count % world_size == 0) {
    ZT_NCCL_CHECK(
        nccl_library().ncclReduceScatter(input.data(), request.output.data(),
                                         as_count(count / world_size), dtype, op, comm, stream),
        comm, where);
    return;
  }
  ZT_NCCL_CHECK(nccl_library().ncclGroupStart(), comm, where);
  for (int owner = 0; owner < world_size; ++owner) {
    const ShardRange shard = shard_range(count, world_size, owner);
    if (shard.count == 0) continue;                                  // the same on every rank
    void* result = owner == rank ? request.output.data() : nullptr;  // read on the root only
    ZT_NCCL_CHECK(nccl_library().ncclReduce(at_element(input, shard.offset), result,
                                            as_count(shard.count), dtype, op, owner, comm, stream),
                  comm, where);
  }
  ZT_NCCL_CHECK(nccl_library().ncclGroupEnd(), comm, where);
}

void all_gather(const CollectiveRequest& request, ncclComm_t comm, cudaStream_t stream, int rank,
                int world_size, const std::string& where) {
  const Tensor& output = request.output;
  const std::int64_t count = output.numel();
  const std::size_t element_bytes = dtype_size(output.dtype());
  if (count % world_size == 0) {
    const std::size_t shard_bytes = as_count(count / world_size) * element_bytes;
    ZT_NCCL_CHECK(nccl_library().ncclAllGather(request.input.data(), output.data(), shard_bytes,
                                               ncclInt8, comm, stream),
                  comm, where);
    return;
  }
  ZT_NCCL_CHECK(nccl_library().ncclGroupStart(), comm, where);
  for (int owner = 0; owner < world_size; ++owner) {
    const ShardRange shard = shard_range(count, world_size, owner);
    if (shard.count == 0) continue;
    void* into = at_element(output, shard.offset);
    const void* from = owner == rank ? request.input.data() : into;  // read on the root only
    ZT_NCCL_CHECK(nccl_library().ncclBroadcast(from, into, as_count(shard.count) * element_bytes,
                                               ncclInt8, owner, comm, stream),
                  comm, where);
  }
  ZT_NCCL_CHECK(nccl_library().ncclGroupEnd(), comm, where);
}

// NCCL has no all-to-all: a send and a receive per peer, its own rank included, in one
// group (the pattern NCCL's documentation gives for it).
void all_to_all(const CollectiveRequest& request, ncclComm_t comm, cudaStream_t stream,
                int world_size, const std::string& where) {
  const std::size_t chunk = request.input.nbytes() / static_cast<std::size_t>(world_size);
  auto* in = static_cast<std::byte*>(request.input.data());
  auto* out = static_cast<std::byte*>(request.output.data());
  ZT_NCCL_CHECK(nccl_library().ncclGroupStart(), comm, where);
  for (int peer = 0; peer < world_size; ++peer) {
    const std::size_t at = static_cast<std::size_t>(peer) * chunk;
    ZT_NCCL_CHECK(nccl_library().ncclSend(in + at, chunk, ncclInt8, peer, comm, stream), comm,
                  where);
    ZT_NCCL_CHECK(nccl_library().ncclRecv(out + at, chunk, ncclInt8, peer, comm, stream), comm,
                  where);
  }
  ZT_NCCL_CHECK(nccl_library().ncclGroupEnd(), comm, where);
}

}  // namespace

ncclDataType_t nccl_dtype(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return ncclFloat32;
    case DType::kBF16:
      return ncclBfloat16;
    case DType::kF16:
      return ncclFloat16;
    case DType::kI32:
      return ncclInt32;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_reduce_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kAvg:
      return ncclAvg;
    case ReduceOp::kMax:
      return ncclMax;
  }
  return ncclSum;
}

void issue_nccl_op(const CollectiveRequest& request, ncclComm_t comm, cudaStream_t stream, int rank,
                   int world_size, const std::string& where) {
  switch (request.kind) {
    case CollectiveKind::kAllReduce: {
      const Tensor& tensor = request.input;
      if (tensor.numel() == 0) return;
      ZT_NCCL_CHECK(nccl_library().ncclAllReduce(
                        tensor.data(), tensor.data(), as_count(tensor.numel()),
                        nccl_dtype(tensor.dtype()), nccl_reduce_op(request.op), comm, stream),
                    comm, where);
      return;
    }
    case CollectiveKind::kReduceScatter:
      if (request.input.numel() > 0) {
        reduce_scatter(request, comm, stream, rank, world_size, where);
      }
      return;
    case CollectiveKind::kAllGather:
      if (request.output.numel() > 0) all_gather(request, comm, stream, rank, world_size, where);
      return;
    case CollectiveKind::kBroadcast: {
      const Tensor& tensor = request.input;
      if (tensor.numel() == 0) return;
      ZT_NCCL_CHECK(nccl_library().ncclBroadcast(tensor.data(), tensor.data(), tensor.nbytes(),
                                                 ncclInt8, request.root, comm, stream),
                    comm, where);
      return;
    }
    case CollectiveKind::kAllToAll:
      if (request.input.numel() > 0) all_to_all(request, comm, stream, world_size, where);
      return;
    case CollectiveKind::kBarrier:
      break;
  }
  ZT_CHECK(false, "issue_nccl_op given a barrier (it is an all-reduce of the barrier buffer)");
}

std::vector<PeerBytes> nccl_bytes_sent(const CollectiveRequest& request, int rank, int world_size) {
  const auto elements = [&](const Tensor& full, int owner) {
    return static_cast<std::uint64_t>(full.numel() -
                                      shard_range(full.numel(), world_size, owner).count) *
           dtype_size(full.dtype());
  };
  const int right = (rank + 1) % world_size;
  std::uint64_t to_right = 0;
  switch (request.kind) {
    case CollectiveKind::kAllReduce:
      to_right = elements(request.input, rank) + elements(request.input, right);
      break;
    case CollectiveKind::kReduceScatter:
      to_right = elements(request.input, rank);
      break;
    case CollectiveKind::kAllGather:
      to_right = elements(request.output, right);
      break;
    case CollectiveKind::kBroadcast: {
      const bool last_in_ring = right == request.root;
      to_right = world_size == 1 || last_in_ring ? 0 : request.input.nbytes();
      break;
    }
    case CollectiveKind::kAllToAll: {
      std::vector<PeerBytes> sent;
      const std::uint64_t chunk = request.input.nbytes() / static_cast<std::uint64_t>(world_size);
      for (int peer = 0; peer < world_size && chunk > 0; ++peer) {
        if (peer != rank) sent.push_back({peer, chunk});
      }
      return sent;
    }
    case CollectiveKind::kBarrier:
      break;
  }
  return {{right, to_right}};
}

}  // namespace zt::comm
