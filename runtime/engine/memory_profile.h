// The memory-profiling mode's files: every rank's timeline of allocations and frees as
// run.dir/memory/rank-K.json (Note [memory profile] in docs/ARCHITECTURE.md), and one
// self-contained run.dir/memory.html with a stacked chart per rank, its peak, the capacity
// and the estimator's prediction drawn against the measurement.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "comm/store/store.h"
#include "core/config/config.h"
#include "core/memory_tracker.h"

namespace zt::engine {

struct RankProfile {
  int rank = 0;
  int world_size = 1;
  std::string device = "cpu:0";
  std::int64_t capacity_bytes = 0;
  std::vector<MemoryEvent> events;
  bool truncated = false;
  std::vector<MemoryEvent> estimate;  // the estimator's timeline; empty: none
};

// rank-K.json, format "zerotrain-memory-profile/1".
std::string rank_profile_json(const RankProfile& profile, const Config& config);
// The rank's <section> of memory.html: an inline SVG chart and a table of its peak.
std::string rank_profile_section(const RankProfile& profile);
// The whole page around the ranks' sections (no script, style or font from elsewhere);
// `note`, when not empty, is a paragraph above the charts (what the page lacks).
std::string memory_html(const std::vector<std::string>& sections, const std::string& title,
                        const std::string& note = "");

// Where rank K's file goes: run.dir/memory/rank-K.json.
std::filesystem::path rank_profile_path(const std::filesystem::path& run_dir, int rank);
// An out-of-memory rank's profile so far, written straight into run.dir with no store:
// its rank-K.json and its section (memory/rank-K.section.html), then memory.html rebuilt
// from the sections of every rank that has written one (Note [Profile of a failed run]).
// Returns memory.html's path; throws IoError naming a file it cannot write.
std::string write_failed_rank_profile(const std::filesystem::path& run_dir,
                                      const RankProfile& profile, const Config& config);
// Collective over `store`: every rank publishes its JSON and section; rank 0 (bounded by
// `timeout`) writes every rank-K.json and memory.html under `run_dir`, returning the page's
// path ("" on other ranks). Throws IoError naming the file it cannot write.
std::string publish_memory_profile(comm::Store& store, const RankProfile& profile,
                                   const Config& config, const std::filesystem::path& run_dir,
                                   std::chrono::milliseconds timeout);

}  // namespace zt::engine
