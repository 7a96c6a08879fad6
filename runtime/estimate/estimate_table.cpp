// The estimate report: the asked config per rank, the table of alternatives, the advice.
#include "runtime/estimate/estimate_table.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "core/config/byte_size.h"
#include "core/config/config_enums.h"
#include "core/error.h"
#include "runtime/engine/device_selection.h"
#include "runtime/engine/json_text.h"

namespace zt::estimate {
namespace {

using engine::json_string;

constexpr int kLargestTableWorld = 64;
constexpr int kAllRanksUpTo = 8;

// Runs every task on a pool of the machine's cores (at most 8 threads); rethrows the first
// failure once all have run.
void run_on_every_core(const std::vector<std::function<void()>>& tasks) {
  std::atomic<std::size_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;  // guarded by failure_mutex
  const auto work = [&] {
    for (std::size_t i = next++; i < tasks.size(); i = next++) {
      try {
        tasks[i]();
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  {
    std::vector<std::jthread> workers;
    const unsigned extra = std::max(1u, std::thread::hardware_concurrency()) - 1;
    for (unsigned t = 0; t < std::min(extra, 7u); ++t) workers.emplace_back(work);
    work();
  }
  if (failure) std::rethrow_exception(failure);
}

std::int64_t peak_of(const RankEstimate& estimate) { return estimate.memory.total_peak_bytes; }

std::vector<Candidate> candidates(const std::vector<int>& worlds) {
  std::vector<Candidate> list;
  for (int world : worlds) {
    for (int stage = 0; stage <= 3; ++stage) {
      list.push_back({stage, OffloadChoice::kNone, world});
      if (stage > 0) list.push_back({stage, OffloadChoice::kOptimizer, world});
      if (stage == 3) list.push_back({stage, OffloadChoice::kOptimizerAndParameters, world});
    }
  }
  return list;
}

CandidateResult run_candidate(const Config& config, const Candidate& candidate,
                              const EstimateOptions& options) {
  CandidateResult result;
  result.candidate = candidate;
  try {
    const Config candidate_config = with_candidate(config, candidate);
    // Rank 0 stands for all: with every block padded to a multiple of the world size the
    // shards are equal, and ranks differ only by bytes of ring scratch (the asked config's
    // rows show every rank).
    result.estimate = estimate_rank(candidate_config, candidate.world_size, 0, options);
  } catch (const Error& e) {  // ConfigError for most; never let a worker thread die of one
    result.estimate.reset();
    result.not_runnable = e.what();
  }
  return result;
}

// Fewest bytes moved per step, then the least memory, then the lower stage.
bool cheaper(const CandidateResult& a, const CandidateResult& b) {
  const auto key = [](const CandidateResult& r) {
    return std::make_tuple(r.estimate->bytes_moved_per_step(), peak_of(*r.estimate),
                           r.candidate.stage, static_cast<int>(r.candidate.offload));
  };
  return key(a) < key(b);
}

std::string categories_json(const CategoryBytes& bytes) {
  std::string json = "{";
  for (std::size_t c = 0; c < kMemoryCategoryCount; ++c) {
    if (c) json += ", ";
    json += json_string(memory_category_name(static_cast<MemoryCategory>(c))) + ": " +
            std::to_string(bytes[c]);
  }
  return json + "}";
}

std::string candidate_json(const CandidateResult& r) {
  std::string json = "{\"stage\": " + std::to_string(r.candidate.stage) +
                     ", \"offload\": " + json_string(offload_choice_name(r.candidate.offload)) +
                     ", \"world_size\": " + std::to_string(r.candidate.world_size) +
                     ", \"settings\": " + json_string(r.candidate.settings());
  if (r.estimate) {
    json +=
        ", \"peak_bytes\": " + std::to_string(peak_of(*r.estimate)) +
        ", \"peak_phase\": " + json_string(r.estimate->memory.total_peak_phase) +
        ", \"host_offload_bytes\": " +
        std::to_string(
            r.estimate->memory.peak_bytes[static_cast<std::size_t>(MemoryCategory::kHostOffload)]) +
        ", \"bytes_moved_per_step\": " + std::to_string(r.estimate->bytes_moved_per_step()) +
        ", \"fits\": " + (r.fits ? "true" : "false");
  } else {
    json += ", \"peak_bytes\": null, \"not_runnable\": " + json_string(r.not_runnable);
  }
  return json + "}";
}

}  // namespace

std::string offload_choice_name(OffloadChoice choice) {
  switch (choice) {
    case OffloadChoice::kNone:
      return "none";
    case OffloadChoice::kOptimizer:
      return "optimizer";
    case OffloadChoice::kOptimizerAndParameters:
      return "optimizer+params";
  }
  return "none";
}

std::string Candidate::describe() const {
  std::string text = "stage " + std::to_string(stage);
  if (offload == OffloadChoice::kOptimizer) text += " with offload.optimizer = cpu";
  if (offload == OffloadChoice::kOptimizerAndParameters) {
    text += " with offload.optimizer = cpu and offload.params = cpu";
  }
  return text + " at world " + std::to_string(world_size);
}

std::string Candidate::settings() const {
  std::string text = "--set zero.stage=" + std::to_string(stage);
  if (offload != OffloadChoice::kNone) text += " --set offload.optimizer=cpu";
  if (offload == OffloadChoice::kOptimizerAndParameters) text += " --set offload.params=cpu";
  return text;
}

std::vector<int> ranks_to_estimate(int world_size) {
  std::vector<int> ranks;
  if (world_size <= kAllRanksUpTo) {
    for (int r = 0; r < world_size; ++r) ranks.push_back(r);
  } else {
    ranks = {0, world_size - 1};
  }
  return ranks;
}

std::vector<int> table_world_sizes(int world_size) {
  std::vector<int> worlds;
  for (int w = 1; w <= std::max(kLargestTableWorld, world_size); w *= 2) worlds.push_back(w);
  if (std::find(worlds.begin(), worlds.end(), world_size) == worlds.end()) {
    worlds.push_back(world_size);
    std::sort(worlds.begin(), worlds.end());
  }
  return worlds;
}

Config with_candidate(const Config& config, const Candidate& candidate) {
  Config result = config;
  result.zero.stage = candidate.stage;
  result.offload.optimizer =
      candidate.offload == OffloadChoice::kNone ? OffloadTarget::kNone : OffloadTarget::kCpu;
  result.offload.params = candidate.offload == OffloadChoice::kOptimizerAndParameters
                              ? OffloadTarget::kCpu
                              : OffloadTarget::kNone;
  result.offload.overlap_step = false;
  result.offload.nvme_path.clear();
  return result;
}

EstimateReport estimate_report(const Config& config, int world_size,
                               const EstimateOptions& options) {
  // What training would refuse on the device estimated for is refused here too: a table for
  // a run that could never start would only mislead (the attention and collectives choices
  // are checked as the meta trainer is built, as a rank checks them).
  engine::check_precision_on_device(config);
  EstimateReport report;
  report.limit_bytes = config.runtime.device_memory_limit_bytes;
  // Every simulation is independent and a few ms of bookkeeping: spread them over the cores.
  const std::vector<int> ranks = ranks_to_estimate(world_size);
  report.ranks.resize(ranks.size());
  report.table_worlds = table_world_sizes(world_size);
  const std::vector<Candidate> list = candidates(report.table_worlds);
  report.table.resize(list.size());
  std::vector<std::function<void()>> tasks;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    tasks.emplace_back(
        [&, i] { report.ranks[i] = estimate_rank(config, world_size, ranks[i], options); });
  }
  tasks.emplace_back([&] {
    Config toggled = config;
    ActivationCheckpointingConfig& checkpointing = toggled.activation_checkpointing;
    checkpointing.enabled = !checkpointing.enabled;
    if (checkpointing.enabled && checkpointing.every_n_blocks <= 0) {
      checkpointing.every_n_blocks = 1;
    }
    try {
      report.other_checkpointing = estimate_rank(toggled, world_size, 0, options);
    } catch (const Error&) {
      report.other_checkpointing.reset();  // the asked config's own estimate says why
    }
  });
  for (std::size_t i = 0; i < list.size(); ++i) {
    tasks.emplace_back([&, i] { report.table[i] = run_candidate(config, list[i], options); });
  }
  run_on_every_core(tasks);
  for (CandidateResult& result : report.table) {
    result.fits = result.estimate && report.limit_bytes > 0 &&
                  peak_of(*result.estimate) <= report.limit_bytes;
  }
  // The cheapest at the asked world size (the hardware at hand); failing that, at the
  // smallest larger world where anything fits.
  const auto cheapest_at = [&](int world) {
    std::optional<CandidateResult> best;
    for (const CandidateResult& r : report.table) {
      if (r.candidate.world_size != world || !r.fits) continue;
      if (!best || cheaper(r, *best)) best = r;
    }
    return best;
  };
  report.cheapest = cheapest_at(world_size);
  for (int world : report.table_worlds) {
    if (report.cheapest) break;
    if (world > world_size) report.cheapest = cheapest_at(world);
  }
  for (const CandidateResult& r : report.table) {
    if (!r.estimate) continue;
    if (!report.smallest || peak_of(*r.estimate) < peak_of(*report.smallest->estimate)) {
      report.smallest = r;
    }
  }
  return report;
}

std::string fitting_advice(const EstimateReport& report) {
  if (report.limit_bytes <= 0) return "";
  if (report.cheapest) {
    const RankEstimate& e = *report.cheapest->estimate;
    return "The estimator says " + report.cheapest->candidate.describe() +
           " fits: " + format_approximate_bytes(peak_of(e)) + " per rank (" +
           report.cheapest->candidate.settings() + "; `zerotrain estimate` shows every choice).";
  }
  if (report.smallest) {
    return "The estimator finds nothing that fits in " +
           format_approximate_bytes(report.limit_bytes) + " up to world " +
           std::to_string(report.table_worlds.back()) + ": the smallest requirement is " +
           format_approximate_bytes(peak_of(*report.smallest->estimate)) + " per rank (" +
           report.smallest->candidate.describe() +
           "); use a smaller model or micro-batch, or activation checkpointing.";
  }
  return "";
}

std::string report_text(const EstimateReport& report, const Config& config) {
  const RankEstimate& first = report.ranks.front();
  std::string text;
  char line[512];
  std::snprintf(line, sizeof(line),
                "%lld parameters, zero.stage %lld, precision %s, world %d, runtime.device %s\n"
                "micro-batch %lld x %lld accumulation step(s) per rank\n\n",
                static_cast<long long>(first.parameters), static_cast<long long>(config.zero.stage),
                std::string(config_name(config.precision.dtype)).c_str(), first.world_size,
                std::string(config_name(config.runtime.device)).c_str(),
                static_cast<long long>(first.micro_batch_size),
                static_cast<long long>(first.grad_accum_steps));
  text += line;
  text += "Per rank, bytes live at the peak by category (host_offload: its own peak):\n";
  std::snprintf(line, sizeof(line), "%-5s", "rank");
  text += line;
  for (std::size_t c = 0; c < kMemoryCategoryCount; ++c) {
    std::snprintf(line, sizeof(line), " %17s",
                  std::string(memory_category_name(static_cast<MemoryCategory>(c))).c_str());
    text += line;
  }
  text += "        peak  at\n";
  const auto host = static_cast<std::size_t>(MemoryCategory::kHostOffload);
  for (const RankEstimate& r : report.ranks) {
    std::snprintf(line, sizeof(line), "%-5d", r.rank);
    text += line;
    for (std::size_t c = 0; c < kMemoryCategoryCount; ++c) {
      const std::int64_t bytes =
          c == host ? r.memory.peak_bytes[c] : r.memory.at_total_peak_bytes[c];
      std::snprintf(line, sizeof(line), " %17s", format_approximate_bytes(bytes).c_str());
      text += line;
    }
    std::snprintf(line, sizeof(line), " %11s  '%s'\n", format_approximate_bytes(peak_of(r)).c_str(),
                  r.memory.total_peak_phase.c_str());
    text += line;
  }
  if (report.other_checkpointing) {
    const auto activations = static_cast<std::size_t>(MemoryCategory::kActivations);
    const RankEstimate& other = *report.other_checkpointing;
    const bool on = config.activation_checkpointing.enabled;
    const RankEstimate& with = on ? first : other;
    const RankEstimate& without = on ? other : first;
    std::snprintf(line, sizeof(line),
                  "activations of rank 0: %s peak without activation checkpointing (total peak "
                  "%s), %s with it%s (total peak %s)\n",
                  format_approximate_bytes(without.memory.peak_bytes[activations]).c_str(),
                  format_approximate_bytes(peak_of(without)).c_str(),
                  format_approximate_bytes(with.memory.peak_bytes[activations]).c_str(),
                  on ? "" : " on every block", format_approximate_bytes(peak_of(with)).c_str());
    text += line;
  }
  std::string by_node;  // on several nodes: where the collectives' bytes go
  if (first.node_count > 1) {
    by_node = " (" + format_approximate_bytes(first.intra_node_bytes_per_step) +
              " inside its node, " + format_approximate_bytes(first.cross_node_bytes_per_step) +
              " across nodes; " + std::to_string(first.node_count) + " nodes)";
  }
  std::snprintf(line, sizeof(line),
                "bytes moved per step by rank 0: %s by collectives%s, %s host <-> device\n",
                format_approximate_bytes(first.comm_bytes_per_step).c_str(), by_node.c_str(),
                format_approximate_bytes(first.offload_bytes_per_step).c_str());
  text += line;
  if (first.node_count > 1) {
    // Rank 0 may send nothing across (its ring neighbour shares its node): name the rank
    // that sends the most, which the slow link waits for.
    const RankEstimate* most = &first;
    for (const RankEstimate& r : report.ranks) {
      if (r.cross_node_bytes_per_step > most->cross_node_bytes_per_step) most = &r;
    }
    std::snprintf(line, sizeof(line),
                  "across nodes, rank %d sends the most of the ranks above: %s per step\n",
                  most->rank, format_approximate_bytes(most->cross_node_bytes_per_step).c_str());
    text += line;
  }
  std::snprintf(line, sizeof(line),
                "checkpoints of rank 0: a %s file per save; %s of host memory while it is "
                "written (one copy of its fp32 masters and optimizer states); %s of host "
                "memory to resume\n\n",
                format_approximate_bytes(first.checkpoint_file_bytes).c_str(),
                format_approximate_bytes(first.checkpoint_save_host_bytes).c_str(),
                format_approximate_bytes(first.checkpoint_load_host_bytes).c_str());
  text += line;

  text += "Peak device bytes per rank by ZeRO stage, offload and world size";
  text += report.limit_bytes > 0 ? " (* fits in runtime.device_memory_limit = " +
                                       format_approximate_bytes(report.limit_bytes) + "):\n"
                                 : ":\n";
  std::snprintf(line, sizeof(line), "%-28s", "stage, offload");
  text += line;
  for (int world : report.table_worlds) {
    std::snprintf(line, sizeof(line), " %10s", ("world " + std::to_string(world)).c_str());
    text += line;
  }
  text += "\n";
  for (const CandidateResult& row : report.table) {
    if (row.candidate.world_size != report.table_worlds.front()) continue;
    std::snprintf(line, sizeof(line), "%-28s",
                  ("stage " + std::to_string(row.candidate.stage) + ", " +
                   offload_choice_name(row.candidate.offload))
                      .c_str());
    text += line;
    for (const CandidateResult& cell : report.table) {
      if (cell.candidate.stage != row.candidate.stage ||
          cell.candidate.offload != row.candidate.offload) {
        continue;
      }
      const std::string value = cell.estimate ? format_approximate_bytes(peak_of(*cell.estimate)) +
                                                    (cell.fits ? "*" : " ")
                                              : "-  ";
      std::snprintf(line, sizeof(line), " %10s", value.c_str());
      text += line;
    }
    text += "\n";
  }
  text += "\n";
  if (report.limit_bytes <= 0) {
    text +=
        "Set runtime.device_memory_limit (e.g. --set runtime.device_memory_limit=16GiB) to get "
        "the cheapest configuration that fits.\n";
  } else if (report.cheapest) {
    const CandidateResult& c = *report.cheapest;
    text += "Cheapest that fits (fewest bytes moved per step): " + c.candidate.describe() +
            ", peak " + format_approximate_bytes(peak_of(*c.estimate)) + " per rank, moving " +
            format_approximate_bytes(c.estimate->bytes_moved_per_step()) + " per step\n  " +
            c.candidate.settings() + "\n";
  } else {
    text += "Nothing fits in " + format_approximate_bytes(report.limit_bytes) + " up to world " +
            std::to_string(report.table_worlds.back()) + ": the smallest requirement is " +
            (report.smallest ? format_approximate_bytes(peak_of(*report.smallest->estimate)) +
                                   " per rank (" + report.smallest->candidate.describe() + ")"
                             : std::string("unknown (no configuration runs)")) +
            ".\n";
  }
  return text;
}

std::string report_json(const EstimateReport& report, const Config& config) {
  const RankEstimate& first = report.ranks.front();
  std::string json =
      "{\"format\": \"zerotrain-estimate/1\", \"parameters\": " + std::to_string(first.parameters) +
      ", \"world_size\": " + std::to_string(first.world_size) +
      ", \"nodes\": " + std::to_string(first.node_count) +
      ", \"stage\": " + std::to_string(config.zero.stage) +
      ", \"dtype\": " + json_string(config_name(config.precision.dtype)) +
      ", \"device\": " + json_string(config_name(config.runtime.device)) +
      ", \"limit_bytes\": " + std::to_string(report.limit_bytes) +
      ", \"micro_batch_size\": " + std::to_string(first.micro_batch_size) +
      ", \"grad_accum_steps\": " + std::to_string(first.grad_accum_steps) + ",\n \"ranks\": [";
  for (std::size_t i = 0; i < report.ranks.size(); ++i) {
    const RankEstimate& r = report.ranks[i];
    json += std::string(i ? ",\n  " : "\n  ") + "{\"rank\": " + std::to_string(r.rank) +
            ", \"peak_bytes\": " + std::to_string(peak_of(r)) +
            ", \"peak_phase\": " + json_string(r.memory.total_peak_phase) +
            ", \"at_peak\": " + categories_json(r.memory.at_total_peak_bytes) +
            ", \"category_peaks\": " + categories_json(r.memory.peak_bytes) +
            ", \"after_step_1\": " + categories_json(r.after_first_step.current_bytes) +
            ", \"comm_bytes_per_step\": " + std::to_string(r.comm_bytes_per_step) +
            ", \"intra_node_bytes_per_step\": " + std::to_string(r.intra_node_bytes_per_step) +
            ", \"cross_node_bytes_per_step\": " + std::to_string(r.cross_node_bytes_per_step) +
            ", \"offload_bytes_per_step\": " + std::to_string(r.offload_bytes_per_step) +
            ", \"checkpoint_file_bytes\": " + std::to_string(r.checkpoint_file_bytes) +
            ", \"checkpoint_save_host_bytes\": " + std::to_string(r.checkpoint_save_host_bytes) +
            ", \"checkpoint_load_host_bytes\": " + std::to_string(r.checkpoint_load_host_bytes) +
            "}";
  }
  json += "]";
  if (report.other_checkpointing) {
    const RankEstimate& other = *report.other_checkpointing;
    json += ",\n \"rank_0_with_checkpointing_" +
            std::string(config.activation_checkpointing.enabled ? "off" : "on") +
            "\": {\"peak_bytes\": " + std::to_string(peak_of(other)) +
            ", \"peak_phase\": " + json_string(other.memory.total_peak_phase) +
            ", \"category_peaks\": " + categories_json(other.memory.peak_bytes) + "}";
  }
  json += ",\n \"table\": [";
  for (std::size_t i = 0; i < report.table.size(); ++i) {
    json += std::string(i ? ",\n  " : "\n  ") + candidate_json(report.table[i]);
  }
  json += "],\n \"cheapest\": " + (report.cheapest ? candidate_json(*report.cheapest) : "null") +
          ",\n \"smallest\": " + (report.smallest ? candidate_json(*report.smallest) : "null") +
          "}\n";
  return json;
}

}  // namespace zt::estimate
