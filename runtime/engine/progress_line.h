// The progress line: redrawn in place on a terminal, a plain line every log_every steps
// otherwise (logs, the launcher's pipes).
#pragma once

#include <chrono>
#include <cstdint>

#include "runtime/engine/metrics_log.h"

namespace zt::engine {

class ProgressLine {
 public:
  ProgressLine(std::int64_t total_steps, std::int64_t log_every);
  void update(const StepMetrics& metrics);
  void finish();

 private:
  std::int64_t total_steps_;
  std::int64_t log_every_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace zt::engine
