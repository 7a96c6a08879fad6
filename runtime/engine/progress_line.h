// The progress line: a plain line every log_every steps, and on a terminal the current step
// redrawn in place between them.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "runtime/engine/metrics_log.h"

namespace zt::engine {

// One step's line without the terminal control codes: step, loss, the validation loss
// when the step evaluated, grad_norm (or that the step was skipped), throughput (tokens/s for token
// models, samples/s otherwise), step time and the ETA.
std::string progress_text(const StepMetrics& metrics, std::int64_t total_steps, double eta_s);

// A sample as print_sample shows it: `"prompt" ▸ "continuation"`, each part on one line
// (one_line). `sample_prompt` is a prefix of `sample`.
std::string sample_line(const std::string& sample, const std::string& sample_prompt);

// Whether the progress line is redrawn in place: stdout is a terminal, and no foreign launcher
// (Open MPI, MPICH/PMI, Slurm's srun) ran this process. Those hand ranks a pseudo-terminal
// while their output goes to a log, where control codes and a line per step are noise.
bool progress_redraws_in_place();

// The line is printed on step 1, every log_every steps, steps that evaluated or sampled,
// and the last. Redrawn in place (a terminal), the printed lines stay, and in between the
// current step is redrawn at most every `redraw_interval`.
class ProgressLine {
 public:
  ProgressLine(std::int64_t total_steps, std::int64_t log_every);
  ProgressLine(std::int64_t total_steps, std::int64_t log_every, bool redraw_in_place,
               std::chrono::milliseconds redraw_interval, std::FILE* out);
  void update(const StepMetrics& metrics);
  // The step's train.sample_every text on a line of its own, after its progress line, with
  // the prompt and what the model wrote quoted apart around the marker " ▸ " (U+25B8), so
  // spaces at the boundary show: `sample after step N (how): "prompt" ▸ " continuation"`,
  // control characters escaped (sample_line).
  void print_sample(const std::string& how, const StepMetrics& metrics);
  void finish();

 private:
  std::int64_t total_steps_;
  std::int64_t log_every_;
  bool terminal_;
  std::chrono::milliseconds redraw_interval_;
  std::FILE* out_;
  bool line_open_ = false;  // a redrawn line not yet ended by a newline
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_redraw_;
};

}  // namespace zt::engine
