// JSON lines for step metrics. Non-finite numbers are written as null: JSON has no NaN.
#include "runtime/engine/metrics_log.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "core/error.h"
#include "runtime/engine/json_text.h"

namespace zt::engine {
namespace {

// The lines of `path` for steps up to `last_step`: what a resumed run keeps of the earlier
// run's log (the steps after its checkpoint are trained again).
std::string lines_through_step(const std::filesystem::path& path, std::int64_t last_step) {
  std::ifstream in(path);
  std::string kept;
  std::string line;
  constexpr std::string_view kStepKey = "{\"step\": ";
  while (std::getline(in, line)) {
    if (!line.starts_with(kStepKey)) continue;
    const std::int64_t step = std::strtoll(line.c_str() + kStepKey.size(), nullptr, 10);
    if (step >= 1 && step <= last_step) kept += line + "\n";
  }
  return kept;
}

}  // namespace

MetricsLog::MetricsLog(const std::filesystem::path& path, std::int64_t keep_through_step)
    : path_(path) {
  const std::string kept = keep_through_step > 0 ? lines_through_step(path, keep_through_step) : "";
  out_.open(path, std::ios::trunc);
  if (!out_) throw IoError("cannot write metrics to " + path.string());
  out_ << kept;
  out_.flush();
}

void MetricsLog::append(const StepMetrics& m) {
  out_ << "{\"step\": " << m.step << ", \"loss\": " << json_number(m.loss)
       << ", \"lr\": " << json_number(m.lr) << ", \"grad_norm\": " << json_number(m.grad_norm)
       << ", \"samples_per_s\": " << json_number(m.samples_per_s)
       << ", \"tokens_per_s\": " << json_number(m.tokens_per_s)
       << ", \"step_ms\": " << json_number(m.step_ms)
       << ", \"loss_scale\": " << json_number(m.loss_scale)
       << ", \"skipped\": " << (m.skipped ? "true" : "false")
       << ", \"all_reduce_bytes\": " << m.all_reduce_bytes
       << ", \"reduce_scatter_bytes\": " << m.reduce_scatter_bytes
       << ", \"all_gather_bytes\": " << m.all_gather_bytes
       << ", \"all_to_all_bytes\": " << m.all_to_all_bytes
       << ", \"intra_node_bytes\": " << m.intra_node_bytes
       << ", \"cross_node_bytes\": " << m.cross_node_bytes;
  // Only steps that evaluated carry a validation loss (a reader treats absent as none).
  if (!std::isnan(m.val_loss)) out_ << ", \"val_loss\": " << json_number(m.val_loss);
  // A sample's text, and its prompt: a prefix of it, so a reader splits off what the model
  // wrote as sample[len(sample_prompt):].
  if (!m.sample.empty()) {
    out_ << ", \"sample\": " << json_string(m.sample)
         << ", \"sample_prompt\": " << json_string(m.sample_prompt);
  }
  out_ << "}\n";
  out_.flush();
  if (!out_) throw IoError("writing metrics to " + path_.string() + " failed (disk full?)");
}

}  // namespace zt::engine
