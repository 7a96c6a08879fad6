// Progress output with an ETA from the mean step time so far.
#include "runtime/engine/progress_line.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

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

std::string sample_line(const std::string& sample, const std::string& sample_prompt) {
  const std::size_t prompt_end = sample.starts_with(sample_prompt) ? sample_prompt.size() : 0;
  return "\"" + one_line(sample.substr(0, prompt_end)) + "\" \xe2\x96\xb8 \"" +
         one_line(sample.substr(prompt_end)) + "\"";
}

bool progress_redraws_in_place() {
  if (isatty(STDOUT_FILENO) != 1) return false;
  for (const char* launcher_variable :
       {"OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (std::getenv(launcher_variable) != nullptr) return false;  // NOLINT(concurrency-mt-unsafe)
  }
  return true;
}

ProgressLine::ProgressLine(std::int64_t total_steps, std::int64_t log_every)
    : ProgressLine(total_steps, log_every, progress_redraws_in_place(),
                   std::chrono::milliseconds(250), stdout) {}

ProgressLine::ProgressLine(std::int64_t total_steps, std::int64_t log_every, bool redraw_in_place,
                           std::chrono::milliseconds redraw_interval, std::FILE* out)
    : total_steps_(total_steps),
      log_every_(log_every),
      terminal_(redraw_in_place),
      redraw_interval_(redraw_interval),
      out_(out),
      start_(std::chrono::steady_clock::now()),
      last_redraw_(start_) {}

void ProgressLine::update(const StepMetrics& m) {
  const auto now = std::chrono::steady_clock::now();
  const bool last = m.step == total_steps_;
  const bool evaluated = !std::isnan(m.val_loss) || !m.sample.empty();
  const bool logged = m.step % log_every_ == 0 || m.step == 1 || last || evaluated;
  const bool redraw = terminal_ && now - last_redraw_ >= redraw_interval_;
  if (!logged && !redraw) return;
  last_redraw_ = now;
  const double elapsed_s = std::chrono::duration<double>(now - start_).count();
  const double eta_s =
      elapsed_s / static_cast<double>(m.step) * static_cast<double>(total_steps_ - m.step);
  // A logged step's line stays (ends in a newline); a redrawn one is replaced by the next.
  std::fprintf(out_, "%s%s%s", terminal_ ? "\r\033[K" : "",
               progress_text(m, total_steps_, eta_s).c_str(), logged ? "\n" : "");
  line_open_ = !logged;
  std::fflush(out_);
}

void ProgressLine::print_sample(const std::string& how, const StepMetrics& m) {
  std::fprintf(out_, "%ssample after step %lld (%s): %s\n", line_open_ ? "\n" : "",
               static_cast<long long>(m.step), how.c_str(),
               sample_line(m.sample, m.sample_prompt).c_str());
  line_open_ = false;
  std::fflush(out_);
}

void ProgressLine::finish() {
  if (line_open_) std::fprintf(out_, "\n");
  line_open_ = false;
  std::fflush(out_);
}

}  // namespace zt::engine
