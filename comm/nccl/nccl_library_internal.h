// libnccl.so.2, opened with dlopen the first time a communicator needs it (Note [CUDA libraries
// opened when used] in core/device/cuda_module.h): the NCCL functions the backend calls, as a
// table of pointers. Included only by comm/nccl/.
#pragma once

#include <nccl.h>

namespace zt::comm {

// The soname the loader is asked for: NCCL 2's runtime package installs no libnccl.so.
inline constexpr const char* kNcclLibrary = "libnccl.so.2";

// Each member bears its NCCL function's name, so that ZT_NCCL_CHECK(nccl_library().ncclBroadcast(
// ...)) reports "ncclBroadcast failed" as a direct call did.
struct NcclLibrary {
  decltype(&::ncclGetUniqueId) ncclGetUniqueId = nullptr;
  decltype(&::ncclCommInitRankConfig) ncclCommInitRankConfig = nullptr;
  decltype(&::ncclCommSplit) ncclCommSplit = nullptr;
  decltype(&::ncclCommGetAsyncError) ncclCommGetAsyncError = nullptr;
  decltype(&::ncclCommFinalize) ncclCommFinalize = nullptr;
  decltype(&::ncclCommDestroy) ncclCommDestroy = nullptr;
  decltype(&::ncclCommAbort) ncclCommAbort = nullptr;
  decltype(&::ncclGetErrorString) ncclGetErrorString = nullptr;
  decltype(&::ncclGetLastError) ncclGetLastError = nullptr;
  decltype(&::ncclGroupStart) ncclGroupStart = nullptr;
  decltype(&::ncclGroupEnd) ncclGroupEnd = nullptr;
  decltype(&::ncclAllReduce) ncclAllReduce = nullptr;
  decltype(&::ncclReduce) ncclReduce = nullptr;
  decltype(&::ncclReduceScatter) ncclReduceScatter = nullptr;
  decltype(&::ncclAllGather) ncclAllGather = nullptr;
  decltype(&::ncclBroadcast) ncclBroadcast = nullptr;
  decltype(&::ncclSend) ncclSend = nullptr;
  decltype(&::ncclRecv) ncclRecv = nullptr;
};

// The open library (nccl_library_missing, require_nccl_library: nccl_communicator.h). Throws
// ConfigError naming libnccl.so.2 and comm.backend when it is missing.
const NcclLibrary& nccl_library();

}  // namespace zt::comm
