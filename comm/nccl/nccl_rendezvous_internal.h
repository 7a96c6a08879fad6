// Connecting the ranks of one NCCL group: every rank publishes which GPU it uses (two ranks
// on one GPU are refused before NCCL sees them), rank 0 creates the ncclUniqueId and
// publishes it through the store under the group's key namespace, every rank reads it and
// initializes a non-blocking communicator with it, bounded by the timeout.
#pragma once

#include <nccl.h>

#include <chrono>
#include <string>

#include "comm/store/store.h"

namespace zt::comm {

// Publishes this rank's GPU (host, PCI bus id of `device_index`, `device_name`) and reads
// every rank's, waiting at most `timeout`; throws ConfigError (comm.backend) when this rank
// shares its GPU with another (Note [One GPU per NCCL rank]).
void check_one_gpu_per_rank(Store& store, const std::string& key_prefix, int rank, int world_size,
                            int device_index, const std::string& device_name,
                            std::chrono::milliseconds timeout, const std::string& who);

// The key rank 0 publishes the id under: "<key_prefix>nccl_unique_id".
std::string unique_id_key(const std::string& key_prefix);

// Rank 0: a new id, published. Others: the published id, waiting at most `timeout`; a
// TimeoutError names rank 0 as the peer that never published it, the key and `who`.
ncclUniqueId exchange_unique_id(Store& store, const std::string& key_prefix, int rank,
                                std::chrono::milliseconds timeout, const std::string& who);

// ncclCommInitRankConfig with blocking = 0, polled with ncclCommGetAsyncError until ready.
// Saying every status_interval (0: never) on stderr what it waits for; after `timeout` it
// aborts the half-made communicator and throws TimeoutError naming `who`.
ncclComm_t init_nccl_comm(const ncclUniqueId& id, int rank, int world_size,
                          std::chrono::milliseconds timeout,
                          std::chrono::milliseconds status_interval, const std::string& who);

// Polls ncclCommGetAsyncError while `comm` reports ncclInProgress (a non-blocking call or
// group end still being issued). Returns ncclSuccess, or the error it ended with, or
// ncclInProgress when `timeout` passed first.
ncclResult_t wait_while_in_progress(ncclComm_t comm, std::chrono::milliseconds timeout);

}  // namespace zt::comm
