// Messages of failed NCCL and CUDA calls.
#include "comm/nccl/nccl_errors_internal.h"
#include "comm/nccl/nccl_library_internal.h"
#include "core/error.h"

namespace zt::comm {
namespace {

// "nccl_library().ncclBroadcast(buffer, ...)" -> "ncclBroadcast": the call's name, without the
// library table it goes through (nccl_library_internal.h).
std::string_view call_name(std::string_view call) {
  call = call.substr(0, call.find('('));
  const std::size_t dot = call.rfind('.');
  return dot == std::string_view::npos ? call : call.substr(dot + 1);
}

}  // namespace

std::string nccl_error_message(ncclResult_t result, std::string_view call, ncclComm_t comm,
                               std::string_view where) {
  std::string message =
      std::string(call_name(call)) + " failed: " + nccl_library().ncclGetErrorString(result);
  const char* last = nccl_library().ncclGetLastError(comm);
  if (last != nullptr && last[0] != '\0') message += std::string(" (NCCL: ") + last + ")";
  if (!where.empty()) message += " " + std::string(where);
  return message;
}

ncclResult_t check_nccl(ncclResult_t result, std::string_view call, ncclComm_t comm,
                        std::string_view where) {
  if (result == ncclSuccess || result == ncclInProgress) return result;
  throw CommError(nccl_error_message(result, call, comm, where));
}

void check_cuda(cudaError_t result, std::string_view call, std::string_view where) {
  if (result == cudaSuccess) return;
  throw CommError(std::string(call_name(call)) + " failed: " + cudaGetErrorString(result) +
                  (where.empty() ? "" : " " + std::string(where)));
}

}  // namespace zt::comm
