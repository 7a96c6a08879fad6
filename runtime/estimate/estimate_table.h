// What `zerotrain estimate` reports: every rank of the config as given, a table of the
// other ZeRO stages, offload choices and world sizes, and the cheapest configuration that
// fits runtime.device_memory_limit (fewest bytes moved per step), or why none does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "runtime/estimate/memory_estimator.h"

namespace zt::estimate {

enum class OffloadChoice { kNone, kOptimizer, kOptimizerAndParameters };
std::string offload_choice_name(OffloadChoice choice);  // "none", "optimizer", "optimizer+params"

struct Candidate {
  int stage = 0;
  OffloadChoice offload = OffloadChoice::kNone;
  int world_size = 1;
  // "stage 3 with offload.optimizer = cpu at world 8"
  std::string describe() const;
  // The --set options that select it ("zero.stage=3 offload.optimizer=cpu").
  std::string settings() const;
};

struct CandidateResult {
  Candidate candidate;
  std::optional<RankEstimate> estimate;  // rank 0; empty: not runnable
  std::string not_runnable;              // why (batch sizes that do not divide ...)
  bool fits = false;                     // peak <= the limit (false without a limit)
};

struct EstimateReport {
  std::int64_t limit_bytes = 0;     // runtime.device_memory_limit (0: none)
  std::vector<RankEstimate> ranks;  // the config as given, at the asked world size
  // Rank 0 with activation checkpointing the other way round (on for every block when the
  // config has it off, off when on): what checkpointing saves.
  std::optional<RankEstimate> other_checkpointing;
  std::vector<int> table_worlds;
  std::vector<CandidateResult> table;
  std::optional<CandidateResult> cheapest;  // fits, fewest bytes moved (then least memory)
  std::optional<CandidateResult> smallest;  // the lowest peak of the table
};

// The ranks estimated for a world: all of them up to 8; beyond, the first and the last
// (their shards are the ones padding can make differ).
std::vector<int> ranks_to_estimate(int world_size);

// The world sizes of the table: powers of two up to 64, with `world_size` among them.
std::vector<int> table_world_sizes(int world_size);

// Applies a candidate to `config` (other offload keys back to their defaults).
Config with_candidate(const Config& config, const Candidate& candidate);

EstimateReport estimate_report(const Config& config, int world_size,
                               const EstimateOptions& options = {});

// The human report and the --json one.
std::string report_text(const EstimateReport& report, const Config& config);
std::string report_json(const EstimateReport& report, const Config& config);

// One sentence for an out-of-memory error: what fits under the limit ("stage 3 with
// offload.optimizer = cpu at world 2 fits: 11.2 GiB per rank (--set zero.stage=3 ...)"),
// or the smallest requirement when nothing does.
std::string fitting_advice(const EstimateReport& report);

}  // namespace zt::estimate
