// memory.json: every rank's bytes per memory category (at the end of step 1, the peak, and
// the phase the peak happened in) with the run's world size, stage, dtype and parameter
// count Ψ. Each rank publishes its entry through the store; rank 0 writes
// run.dir/memory.json and the end-of-run summary. The format is documented in
// docs/ARCHITECTURE.md (Note [memory.json]) and versioned by its "format" field.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "comm/store/store.h"
#include "core/config/config.h"
#include "core/memory_tracker.h"

namespace zt::engine {

struct MemoryReportRun {
  int rank = 0;
  int world_size = 1;
  const Config* config = nullptr;
  std::int64_t parameters = 0;   // Ψ, real (unpadded) parameters
  std::string device = "cpu:0";  // where the rank's tracked bytes live ("cuda:1")
};

// Throws IoError naming run.dir when memory.json could not be written there, so a run
// fails before it trains rather than after.
void check_memory_report_writable(const std::filesystem::path& run_dir);

// One rank's entry: {"rank": r, "categories": {...}, "total": {...}}.
std::string rank_memory_json(int rank, const MemorySnapshot& after_first_step,
                             const MemorySnapshot& end, const std::string& device = "cpu:0");

// Collective over `store`: every rank publishes its entry; rank 0 waits for all of them
// (bounded by `timeout`), writes `path`, and returns the summary for the end-of-run line:
// the largest rank's total peak with its per-category peaks. Other ranks return "".
std::string publish_memory_report(comm::Store& store, const MemoryReportRun& run,
                                  const MemorySnapshot& after_first_step, const MemorySnapshot& end,
                                  const std::filesystem::path& path,
                                  std::chrono::milliseconds timeout);

}  // namespace zt::engine
