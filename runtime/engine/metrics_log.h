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
  // Creates (truncates) `path`, keeping the lines of steps 1..keep_through_step an earlier
  // run wrote there (a resumed run continues its log); throws IoError naming it.
  explicit MetricsLog(const std::filesystem::path& path, std::int64_t keep_through_step = 0);
  void append(const StepMetrics& metrics);

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

}  // namespace zt::engine
