// Progress output with an ETA from the mean step time so far.
#include "runtime/engine/progress_line.h"

#include <unistd.h>

#include <cstdio>

namespace zt::engine {

ProgressLine::ProgressLine(std::int64_t total_steps, std::int64_t log_every)
    : total_steps_(total_steps),
      log_every_(log_every),
      terminal_(isatty(STDOUT_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {}

void ProgressLine::update(const StepMetrics& m) {
  const bool last = m.step == total_steps_;
  if (!terminal_ && m.step % log_every_ != 0 && m.step != 1 && !last) return;
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double eta_s =
      elapsed_s / static_cast<double>(m.step) * static_cast<double>(total_steps_ - m.step);
  std::printf(
      "%sstep %lld/%lld  loss %.4f  grad_norm %.3f  %.0f tokens/s  %.1f ms/step  ETA %dm%02ds%s",
      terminal_ ? "\r\033[K" : "", static_cast<long long>(m.step),
      static_cast<long long>(total_steps_), m.loss, m.grad_norm, m.tokens_per_s, m.step_ms,
      static_cast<int>(eta_s) / 60, static_cast<int>(eta_s) % 60, terminal_ ? "" : "\n");
  std::fflush(stdout);
}

void ProgressLine::finish() {
  if (terminal_) std::printf("\n");
  std::fflush(stdout);
}

}  // namespace zt::engine
