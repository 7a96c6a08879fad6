// metrics.jsonl: one JSON object per optimizer step, appended and flushed as it happens so
// a crashed run keeps every finished step.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "runtime/engine/step_metrics.h"

namespace zt::engine {

class MetricsLog {
 public:
  // Creates (truncates) `path`; throws IoError naming it when it cannot.
  explicit MetricsLog(const std::filesystem::path& path);
  void append(const StepMetrics& metrics);

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

}  // namespace zt::engine
