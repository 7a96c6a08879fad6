// Opens libnccl.so.2 and resolves the functions the NCCL backend calls (Note [CUDA libraries
// opened when used] in core/device/cuda_module.h).
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "comm/nccl/nccl_communicator.h"
#include "comm/nccl/nccl_library_internal.h"
#include "core/error.h"

namespace zt::comm {
namespace {

struct Opened {
  NcclLibrary library;
  std::optional<std::string> missing;
};

template <typename Function>
bool resolve(void* handle, const char* name, Function& into, std::optional<std::string>& missing) {
  into = reinterpret_cast<Function>(::dlsym(handle, name));
  if (into == nullptr && !missing) missing = std::string(kNcclLibrary) + " has no " + name;
  return into != nullptr;
}

Opened open_nccl() {
  Opened opened;
  ::dlerror();
  // Never closed: NCCL's own threads may outlive any owner we could give the handle.
  void* handle = ::dlopen(kNcclLibrary, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    opened.missing = why != nullptr ? std::string(why) : std::string(kNcclLibrary) + " not found";
    return opened;
  }
  NcclLibrary& l = opened.library;
  std::optional<std::string>& m = opened.missing;
  resolve(handle, "ncclGetUniqueId", l.ncclGetUniqueId, m);
  resolve(handle, "ncclCommInitRankConfig", l.ncclCommInitRankConfig, m);
  resolve(handle, "ncclCommSplit", l.ncclCommSplit, m);  // NCCL 2.18 and later
  resolve(handle, "ncclCommGetAsyncError", l.ncclCommGetAsyncError, m);
  resolve(handle, "ncclCommFinalize", l.ncclCommFinalize, m);
  resolve(handle, "ncclCommDestroy", l.ncclCommDestroy, m);
  resolve(handle, "ncclCommAbort", l.ncclCommAbort, m);
  resolve(handle, "ncclGetErrorString", l.ncclGetErrorString, m);
  resolve(handle, "ncclGetLastError", l.ncclGetLastError, m);
  resolve(handle, "ncclGroupStart", l.ncclGroupStart, m);
  resolve(handle, "ncclGroupEnd", l.ncclGroupEnd, m);
  resolve(handle, "ncclAllReduce", l.ncclAllReduce, m);
  resolve(handle, "ncclReduce", l.ncclReduce, m);
  resolve(handle, "ncclReduceScatter", l.ncclReduceScatter, m);
  resolve(handle, "ncclAllGather", l.ncclAllGather, m);
  resolve(handle, "ncclBroadcast", l.ncclBroadcast, m);
  resolve(handle, "ncclSend", l.ncclSend, m);  // NCCL 2.7 and later
  resolve(handle, "ncclRecv", l.ncclRecv, m);
  return opened;
}

const Opened& opened() {
  static const Opened once = open_nccl();  // a function-local static: opened once, thread-safe
  return once;
}

}  // namespace

std::optional<std::string> nccl_library_missing() { return opened().missing; }

const NcclLibrary& nccl_library() {
  const Opened& nccl = opened();
  if (nccl.missing) {
    throw ConfigError("comm.backend = \"nccl\" needs NCCL's " + std::string(kNcclLibrary) +
                      ", which cannot be used here (" + *nccl.missing +
                      "): install NCCL 2 (libnccl2) or set comm.backend = \"gloo\"");
  }
  return nccl.library;
}

void require_nccl_library() { nccl_library(); }

}  // namespace zt::comm
