// The checks every NCCL and CUDA call of the NCCL backend goes through: a failure becomes a
// CommError naming the call, NCCL's error string and last error, and what we were doing on
// which rank. ncclInProgress is not a failure (non-blocking communicators return it).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>
#include <string_view>

namespace zt::comm {

// "ncclBroadcast failed: invalid argument (NCCL: Broadcast : invalid root 5 (root should be
// in the 0..0 range)) on rank 0 of 1, broadcast #3 (4 KiB f32, root 5)". `call` may be the
// whole call expression: only the name before '(' is kept. `comm` may be null.
std::string nccl_error_message(ncclResult_t result, std::string_view call, ncclComm_t comm,
                               std::string_view where);

// Returns `result` when it is ncclSuccess or ncclInProgress; throws the message above else.
ncclResult_t check_nccl(ncclResult_t result, std::string_view call, ncclComm_t comm,
                        std::string_view where);
void check_cuda(cudaError_t result, std::string_view call, std::string_view where);

}  // namespace zt::comm

// ZT_NCCL_CHECK(call, nccl_comm, where): check_nccl naming the call. Evaluates to the result.
#define ZT_NCCL_CHECK(call, nccl_comm, where) \
  ::zt::comm::check_nccl((call), #call, (nccl_comm), (where))
#define ZT_COMM_CUDA_CHECK(call, where) ::zt::comm::check_cuda((call), #call, (where))
