// Reading the ranks' flight records (run.dir/flight/rank-N.json, Note [The flight recorder] in
// comm/flight_recorder.h) together and saying what they show: the ranks that never wrote one,
// the first op the ranks issued differently, and which ranks are behind, in which op (Note
// [Diagnosing from flight records]).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace zt::engine {

struct FlightOp {
  std::string group;
  std::uint64_t sequence_number = 0;
  std::string kind;
  std::int64_t numel = 0;
  std::string dtype;
  std::int64_t root = -1;
  std::int64_t step = 0;
  std::string phase;
  std::string state;  // queued, running, completed, failed
};

struct RankFlightRecord {
  int rank = 0;
  std::optional<int> world_size;  // the rank's world, in records that say it
  std::string reason;
  std::vector<FlightOp> ops;  // oldest first
};

// Every run_dir/flight/rank-N.json, by rank (with `written_since`, only those last written
// then or later: one attempt's records, not an earlier run's). Throws Error naming the file
// for one that is not a flight record (unreadable, not JSON, fields missing or of the wrong
// kind) and naming the directory when there is none.
std::vector<RankFlightRecord> read_flight_records(
    const std::filesystem::path& run_dir,
    std::optional<std::filesystem::file_time_type> written_since = std::nullopt);

// The verdict, one finding a line: ranks of `world_size` (nullopt: the world the records
// name, else one more than the highest rank seen) that left no record; the first (group, sequence
// number) two ranks issued differently, with each side's op, step and phase; and per group the
// ranks whose last op is behind the others', with the op each is in.
std::vector<std::string> diagnose_flight_records(const std::vector<RankFlightRecord>& records,
                                                 std::optional<int> world_size);

// The launcher's verdict: diagnose_flight_records over run_dir's records written at `since` or
// later, under a world of `world_size`; empty when there are none (no flight directory, or
// only older records). Throws as read_flight_records does for a damaged record.
std::vector<std::string> flight_verdict_since(const std::filesystem::path& run_dir, int world_size,
                                              std::filesystem::file_time_type since);

}  // namespace zt::engine
