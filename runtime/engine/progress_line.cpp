// Progress output with an ETA from the mean step time so far.
#include "runtime/engine/progress_line.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "runtime/engine/training_sample.h"

namespace zt::engine {

std::string progress_text(const StepMetrics& m, std::int64_t total_steps, double eta_s) {
  char gradient[96];
  if (m.skipped) {
    // An fp16 overflow: no update was made, and the norm of inf/nan gradients means nothing.
    std::snprintf(gradient, sizeof(gradient), "(skipped: fp16 overflow at loss scale %g)",
                  m.loss_scale);
  } else {
    std::snprintf(gradient, sizeof(gradient), "grad_norm %.3f", m.grad_norm);
  }
  const bool tokens = std::isfinite(m.tokens_per_s);
  const int eta = static_cast<int>(eta_s);
  char validation[48] = "";
  if (!std::isnan(m.val_loss))
    std::snprintf(validation, sizeof(validation), "  val_loss %.4f", m.val_loss);
  char text[320];
  std::snprintf(text, sizeof(text),
                "step %lld/%lld  loss %.4f%s  %s  %.0f %s  %.1f ms/step  ETA %dm%02ds",
                static_cast<long long>(m.step), static_cast<long long>(total_steps), m.loss,
                validation, gradient, tokens ? m.tokens_per_s : m.samples_per_s,
                tokens ? "tokens/s" : "samples/s", m.step_ms, eta / 60, eta % 60);
  return text;
}

ProgressLine::ProgressLine(std::int64_t total_steps, std::int64_t log_every)
    : total_steps_(total_steps),
      log_every_(log_every),
      terminal_(isatty(STDOUT_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {}

void ProgressLine::update(const StepMetrics& m) {
  const bool last = m.step == total_steps_;
  const bool evaluated = !std::isnan(m.val_loss) || !m.sample.empty();
  if (!terminal_ && m.step % log_every_ != 0 && m.step != 1 && !last && !evaluated) return;
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double eta_s =
      elapsed_s / static_cast<double>(m.step) * static_cast<double>(total_steps_ - m.step);
  std::printf("%s%s%s", terminal_ ? "\r\033[K" : "", progress_text(m, total_steps_, eta_s).c_str(),
              terminal_ ? "" : "\n");
  std::fflush(stdout);
}

void ProgressLine::print_sample(const std::string& how, const StepMetrics& m) {
  // On a terminal the progress line is redrawn in place: end it, so the sample stays.
  std::printf("%ssample after step %lld (%s): \"%s\"\n", terminal_ ? "\n" : "",
              static_cast<long long>(m.step), how.c_str(), one_line(m.sample).c_str());
  std::fflush(stdout);
}

void ProgressLine::finish() {
  if (terminal_) std::printf("\n");
  std::fflush(stdout);
}

}  // namespace zt::engine
