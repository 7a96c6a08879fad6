// JSON lines for step metrics. Non-finite numbers are written as null: JSON has no NaN.
#include "runtime/engine/metrics_log.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "core/error.h"

namespace zt::engine {
namespace {

std::string number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

}  // namespace

MetricsLog::MetricsLog(const std::filesystem::path& path) : path_(path), out_(path) {
  if (!out_) throw IoError("cannot write metrics to " + path.string());
}

void MetricsLog::append(const StepMetrics& m) {
  out_ << "{\"step\": " << m.step << ", \"loss\": " << number(m.loss)
       << ", \"lr\": " << number(m.lr) << ", \"grad_norm\": " << number(m.grad_norm)
       << ", \"samples_per_s\": " << number(m.samples_per_s)
       << ", \"tokens_per_s\": " << number(m.tokens_per_s) << ", \"step_ms\": " << number(m.step_ms)
       << ", \"loss_scale\": " << number(m.loss_scale)
       << ", \"skipped\": " << (m.skipped ? "true" : "false")
       << ", \"all_reduce_bytes\": " << m.all_reduce_bytes
       << ", \"reduce_scatter_bytes\": " << m.reduce_scatter_bytes
       << ", \"all_gather_bytes\": " << m.all_gather_bytes << "}\n";
  out_.flush();
  if (!out_) throw IoError("writing metrics to " + path_.string() + " failed (disk full?)");
}

}  // namespace zt::engine
