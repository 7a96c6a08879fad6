// Writing memory.json from every rank's tracker snapshots, gathered through the store.
#include "runtime/engine/memory_report.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/config/byte_size.h"
#include "core/config/config_enums.h"
#include "core/error.h"
#include "runtime/engine/device_selection.h"
#include "runtime/engine/json_text.h"

namespace zt::engine {
namespace {

constexpr std::string_view kKeyPrefix = "zerotrain/memory_report/";

std::string entry(std::int64_t after_first_step, std::int64_t peak, std::string_view phase) {
  return "{\"after_step_1_bytes\": " + std::to_string(after_first_step) +
         ", \"peak_bytes\": " + std::to_string(peak) + ", \"peak_phase\": " + json_string(phase) +
         "}";
}

// What rank 0 needs for the summary line: the total peak first, then each category's peak.
std::string summary_numbers(const MemorySnapshot& end) {
  std::string numbers = std::to_string(end.total_peak_bytes);
  for (std::int64_t peak : end.peak_bytes) numbers += " " + std::to_string(peak);
  return numbers + " " + end.total_peak_phase;
}

std::string summary_line(int rank, const std::string& numbers) {
  std::istringstream in(numbers);
  std::int64_t total = 0;
  in >> total;
  std::string line = format_byte_size(total) + " on rank " + std::to_string(rank);
  std::string categories;
  for (std::size_t c = 0; c < kMemoryCategoryCount; ++c) {
    std::int64_t peak = 0;
    in >> peak;
    if (!categories.empty()) categories += ", ";
    categories += std::string(memory_category_name(static_cast<MemoryCategory>(c))) + " " +
                  format_byte_size(peak);
  }
  std::string phase;
  std::getline(in >> std::ws, phase);
  return line + " (at '" + phase + "'; peaks: " + categories + ")";
}

}  // namespace

void check_memory_report_writable(const std::filesystem::path& run_dir) {
  std::error_code error;
  std::filesystem::create_directories(run_dir, error);
  const std::filesystem::path probe = run_dir / ".memory.json.probe";
  {
    std::ofstream out(probe);
    out << "probe";
    if (!error && out) {
      out.close();
      std::filesystem::remove(probe, error);
      return;
    }
  }
  throw IoError("run.dir " + run_dir.string() +
                ": cannot write memory.json there (not a writable directory); set run.dir to a "
                "directory this user can write");
}

std::string rank_memory_json(int rank, const MemorySnapshot& after_first_step,
                             const MemorySnapshot& end, const std::string& device) {
  std::string json = "{\"rank\": " + std::to_string(rank) + ", \"device\": " + json_string(device) +
                     ", \"categories\": {";
  for (std::size_t c = 0; c < kMemoryCategoryCount; ++c) {
    if (c > 0) json += ", ";
    json += json_string(memory_category_name(static_cast<MemoryCategory>(c))) + ": " +
            entry(after_first_step.current_bytes[c], end.peak_bytes[c], end.peak_phase[c]);
  }
  return json + "}, \"total\": " +
         entry(after_first_step.total_current_bytes, end.total_peak_bytes, end.total_peak_phase) +
         "}";
}

std::string publish_memory_report(comm::Store& store, const MemoryReportRun& run,
                                  const MemorySnapshot& after_first_step, const MemorySnapshot& end,
                                  const std::filesystem::path& path,
                                  std::chrono::milliseconds timeout) {
  const std::string key = std::string(kKeyPrefix) + std::to_string(run.rank);
  store.set(key + "/json", rank_memory_json(run.rank, after_first_step, end, run.device));
  store.set(key + "/summary", summary_numbers(end));
  if (run.rank != 0) return "";

  const Config& config = *run.config;
  std::string json =
      "{\"format\": \"zerotrain-memory/1\", \"world_size\": " + std::to_string(run.world_size) +
      ", \"stage\": " + std::to_string(config.zero.stage) +
      ", \"dtype\": " + json_string(config_name(config.precision.dtype)) +
      ", \"parameters\": " + std::to_string(run.parameters) +
      ", \"attention\": " + json_string(attention_description(config)) + ", \"ranks\": [\n";
  int largest_rank = 0;
  std::int64_t largest_peak = -1;
  std::string largest_numbers;
  for (int r = 0; r < run.world_size; ++r) {
    const std::string rank_key = std::string(kKeyPrefix) + std::to_string(r);
    json += "  " + store.get(rank_key + "/json", timeout) + (r + 1 < run.world_size ? ",\n" : "\n");
    const std::string numbers = store.get(rank_key + "/summary", timeout);
    const std::int64_t peak = std::stoll(numbers);
    if (peak > largest_peak) {
      largest_peak = peak;
      largest_rank = r;
      largest_numbers = numbers;
    }
  }
  json += "]}\n";
  std::ofstream out(path);
  out << json;
  if (!out) throw IoError("cannot write " + path.string());
  return summary_line(largest_rank, largest_numbers);
}

}  // namespace zt::engine
