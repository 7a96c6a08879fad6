// The progress line: redrawn in place on a terminal, a plain line every log_every steps
// otherwise (logs, the launcher's pipes).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "runtime/engine/metrics_log.h"

namespace zt::engine {

// One step's line without the terminal control codes: step, loss, the validation loss
// when the step evaluated, grad_norm (or that the step was skipped), throughput (tokens/s for token
// models, samples/s otherwise), step time and the ETA.
std::string progress_text(const StepMetrics& metrics, std::int64_t total_steps, double eta_s);

// A terminal redraws the line every step; elsewhere it is printed on step 1, every log_every
// steps, steps that evaluated or sampled, and the last.
class ProgressLine {
 public:
  ProgressLine(std::int64_t total_steps, std::int64_t log_every);
  void update(const StepMetrics& metrics);
  // The step's train.sample_every text on a line of its own, after its progress line:
  // `sample after step N (how): "text"`, control characters escaped.
  void print_sample(const std::string& how, const StepMetrics& metrics);
  void finish();

 private:
  std::int64_t total_steps_;
  std::int64_t log_every_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace zt::engine
