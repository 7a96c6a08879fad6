// ParallelThreads: a test sets parallel_for's thread count for a scope and gets the old one
// back, so tests that compare 1 with N threads leave the process as they found it.
#pragma once

#include "core/parallel_for.h"

namespace zt::testing {

class ParallelThreads {
 public:
  explicit ParallelThreads(int threads) : before_(parallel_threads()) {
    set_parallel_threads(threads);
  }
  ParallelThreads(const ParallelThreads&) = delete;
  ParallelThreads& operator=(const ParallelThreads&) = delete;
  ~ParallelThreads() { set_parallel_threads(before_); }

 private:
  int before_;
};

// The thread counts the "same bits on any thread count" tests compare.
inline constexpr int kThreadCounts[] = {1, 2, 4};

}  // namespace zt::testing
