// keep_freed_heap_memory (Note [Heap trimming]): buffers freed and allocated again, as
// oneDNN's GEMMs do on every call, come back without page faults.
#include "core/device/host_heap.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <array>
#include <cstdlib>
#include <cstring>

#include "support/sanitizers.h"

namespace zt {
namespace {

long minor_page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Sixteen 64 KiB buffers (each under glibc's initial 128 KiB mmap threshold, together past
// its 128 KiB trim threshold), written and freed; returns the page faults of the last round.
long faults_of_repeated_buffers() {
  constexpr std::size_t kBuffers = 16;
  constexpr std::size_t kBufferBytes = 64 << 10;
  long faults = 0;
  for (int round = 0; round < 3; ++round) {
    const long before = minor_page_faults();
    std::array<void*, kBuffers> buffers{};
    for (void*& buffer : buffers) {
      buffer = std::malloc(kBufferBytes);  // NOLINT: the C heap is what is under test
      if (buffer != nullptr) std::memset(buffer, round + 1, kBufferBytes);
    }
    for (void* buffer : buffers) std::free(buffer);  // NOLINT
    faults = minor_page_faults() - before;
  }
  return faults;
}

// In a fresh process (a death test's), where no freed mapping has raised glibc's thresholds
// yet: without the setting every round faults its 256 pages in again.
TEST(HostHeapDeathTest, RepeatedBuffersAreNotFaultedInAgain) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  if (testing::kAddressSanitizer) {
    GTEST_SKIP() << "AddressSanitizer replaces glibc's malloc, whose thresholds are under test; "
                    "the default build checks them";
  }
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") != nullptr ||  // NOLINT(concurrency-mt-unsafe)
      std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr) {  // NOLINT(concurrency-mt-unsafe)
    GTEST_SKIP() << "the environment sets glibc's malloc thresholds";
  }
  EXPECT_EXIT(
      {
        if (!keep_freed_heap_memory()) std::_Exit(3);
        std::_Exit(faults_of_repeated_buffers() < 32 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace zt
