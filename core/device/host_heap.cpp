// keep_freed_heap_memory: glibc's trim and mmap thresholds (Note [Heap trimming]).
#include "core/device/host_heap.h"

#include <cstdlib>
#include <cstring>
#include <initializer_list>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace zt {
namespace {

bool set_thresholds() {
#if defined(__GLIBC__)
  // Read once, before any thread of ours could change the environment.
  for (const char* variable : {"MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"}) {
    if (std::getenv(variable) != nullptr) return false;  // NOLINT(concurrency-mt-unsafe)
  }
  const char* tunables = std::getenv("GLIBC_TUNABLES");  // NOLINT(concurrency-mt-unsafe)
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr) return false;
  constexpr int kMmapThresholdBytes = 32 << 20;  // glibc's largest (64-bit)
  return mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes) == 1 &&
         mallopt(M_TRIM_THRESHOLD, 2 * kMmapThresholdBytes) == 1;
#else
  return false;
#endif
}

}  // namespace

bool keep_freed_heap_memory() {
  static const bool set = set_thresholds();
  return set;
}

}  // namespace zt
