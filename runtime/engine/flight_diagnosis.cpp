// Reading the flight records of a run's ranks and naming the silent, the mismatched and the
// ranks behind.
#include "runtime/engine/flight_diagnosis.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "data/json_document.h"

namespace zt::engine {
namespace {

// Note [Diagnosing from flight records]
// Each rank's record holds the last ops its communicators were given, each named by its
// communicator's group and its sequence number in that group: the same op has the same pair on
// every member, since a group's ranks submit its ops in one order. So the records compare by
// that pair without clocks. Three findings, in the order a reader wants them:
// - silent ranks: no record at all (killed, stopped, or still running without an error);
// - the first op two ranks issued differently (kind, element count, dtype or root differ at
//   one pair, or the step or phase it was submitted in): a rank that took another branch, or
//   sized a bucket differently, shows here, with the step and phase each side was in. When
//   the rank's later ops are the others' shifted by one, it left one out (or issued one more):
//   the finding names that op. Equal-sized ops in a row (a model's blocks) would otherwise
//   pair up silently after a skip, which is why the phase takes part in the comparison;
// - per group, the ranks whose last op comes before the others' (behind: they never submitted
//   what the others wait in), and for every rank the first op it had not completed: the one it
//   waits in.
// A ring holds the last ops only, so a pair one rank no longer holds is not a mismatch.

const data::JsonValue& member(const data::JsonValue& object, std::string_view key,
                              const std::string& path) {
  const data::JsonValue* value = object.find(key);
  if (value == nullptr) {
    throw FormatError(path + ": not a flight record: " + object.position() + " has no \"" +
                      std::string(key) + "\"");
  }
  return *value;
}

RankFlightRecord read_record(const std::filesystem::path& path) {
  const std::string name = path.string();
  const data::JsonValue root = data::read_json_file(name);
  RankFlightRecord record;
  record.rank = static_cast<int>(member(root, "rank", name).as_integer("rank"));
  record.reason = member(root, "reason", name).as_string("reason");
  if (const data::JsonValue* world = root.find("world_size"); world != nullptr) {
    const std::int64_t size = world->as_integer("world_size");
    if (size < 1 || record.rank < 0 || record.rank >= size) {
      throw FormatError(name + ": not a flight record: rank " + std::to_string(record.rank) +
                        " of a world of " + std::to_string(size));
    }
    record.world_size = static_cast<int>(size);
  }
  for (const data::JsonValue& entry : member(root, "entries", name).as_array("entries")) {
    FlightOp op;
    op.group = member(entry, "group", name).as_string("group");
    op.sequence_number = static_cast<std::uint64_t>(member(entry, "seq", name).as_integer("seq"));
    op.kind = member(entry, "kind", name).as_string("kind");
    op.numel = member(entry, "numel", name).as_integer("numel");
    op.dtype = member(entry, "dtype", name).as_string("dtype");
    op.root = member(entry, "root", name).as_integer("root");
    op.step = member(entry, "step", name).as_integer("step");
    op.phase = member(entry, "phase", name).as_string("phase");
    op.state = member(entry, "state", name).as_string("state");
    record.ops.push_back(std::move(op));
  }
  return record;
}

std::string describe(const FlightOp& op) {
  std::string text = op.kind + " #" + std::to_string(op.sequence_number) + " of group " + op.group +
                     " (" + std::to_string(op.numel) + " " + op.dtype;
  if (op.root >= 0) text += ", root " + std::to_string(op.root);
  return text + "; step " + std::to_string(op.step) + ", phase \"" + op.phase + "\"; " + op.state +
         ")";
}

// The same op on two ranks: what it moves, and where in the trainer's step it was submitted
// (every rank submits from its trainer's thread, so the step and phase agree on all of them).
bool same_op(const FlightOp& a, const FlightOp& b) {
  return a.kind == b.kind && a.numel == b.numel && a.dtype == b.dtype && a.root == b.root &&
         a.step == b.step && a.phase == b.phase;
}

using OpsBySequence = std::map<std::uint64_t, const FlightOp*>;

// Whether `ops`' op at each sequence number t >= from is `reference`'s at t + shift, for every t
// both hold (at least one): shift 1 when `ops` lacks one of reference's ops, -1 when it has one
// more.
bool shifted_by(const OpsBySequence& ops, const OpsBySequence& reference, std::uint64_t from,
                int shift) {
  int compared = 0;
  for (auto it = ops.lower_bound(from); it != ops.end(); ++it) {
    if (shift < 0 && it->first == from) continue;  // the extra op itself
    const auto theirs = reference.find(it->first + static_cast<std::uint64_t>(shift));
    if (theirs == reference.end()) continue;
    if (!same_op(*it->second, *theirs->second)) return false;
    ++compared;
  }
  return compared > 0;
}

// Reads a group's first mismatch, at `sequence`, as one rank leaving out an op, or issuing
// one more, when its later ops are the others' shifted by one: the finding names the op.
std::optional<std::string> explain_shift(std::uint64_t sequence,
                                         const std::map<int, OpsBySequence>& ranks_ops) {
  // The reference: the op most ranks issued at `sequence` (ties: the lowest rank's).
  std::vector<std::pair<int, const FlightOp*>> at;
  for (const auto& [rank, ops] : ranks_ops) {
    if (const auto it = ops.find(sequence); it != ops.end()) at.push_back({rank, it->second});
  }
  int reference = -1;
  std::size_t agreeing = 0;
  for (const auto& [rank, op] : at) {
    const std::size_t count = static_cast<std::size_t>(std::count_if(
        at.begin(), at.end(), [&](const auto& other) { return same_op(*other.second, *op); }));
    if (count > agreeing) {
      agreeing = count;
      reference = rank;
    }
  }
  if (reference < 0) return std::nullopt;
  const OpsBySequence& reference_ops = ranks_ops.at(reference);
  const FlightOp& expected = *reference_ops.at(sequence);
  for (const auto& [rank, op] : at) {
    if (same_op(*op, expected)) continue;
    const std::string who = "rank " + std::to_string(rank);
    const std::string them =
        agreeing > 1 ? "the others'" : "rank " + std::to_string(reference) + "'s";
    // Two ranks alone cannot say which of them is the odd one.
    const bool ambiguous = agreeing == 1;
    if (shifted_by(ranks_ops.at(rank), reference_ops, sequence, 1)) {
      return who + " did not issue " + describe(expected) + ": its ops from #" +
             std::to_string(sequence) + " on are " + them + " from #" +
             std::to_string(sequence + 1) + " on" +
             (ambiguous ? " (or rank " + std::to_string(reference) + " issued one op more)" : "");
    }
    if (shifted_by(ranks_ops.at(rank), reference_ops, sequence, -1)) {
      return who + " issued an op " +
             (agreeing > 1 ? "the others" : "rank " + std::to_string(reference)) +
             " did not: its " + describe(*op) + ", after which its ops are " + them +
             " shifted by one" +
             (ambiguous ? " (or rank " + std::to_string(reference) + " left one out)" : "");
    }
  }
  return std::nullopt;
}

// The digits of a name "rank-N.json", or nothing for any other file. (Plain string work:
// std::regex trips GCC 12's maybe-uninitialized warning under the sanitizers.)
std::optional<std::string> rank_in_record_name(const std::string& name) {
  constexpr std::string_view kPrefix = "rank-";
  constexpr std::string_view kSuffix = ".json";
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(kSuffix)) {
    return std::nullopt;
  }
  std::string digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  const bool all_digits =
      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!all_digits) return std::nullopt;
  return digits;
}

}  // namespace

std::vector<RankFlightRecord> read_flight_records(
    const std::filesystem::path& run_dir,
    std::optional<std::filesystem::file_time_type> written_since) {
  const std::filesystem::path directory = run_dir / "flight";
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) {
    throw IoError(directory.string() +
                  ": no flight records (a rank writes run.dir/flight/rank-N.json when it stops "
                  "on a communication error)");
  }
  std::vector<RankFlightRecord> records;
  for (const auto& file : std::filesystem::directory_iterator(directory)) {
    const std::string name = file.path().filename().string();
    const std::optional<std::string> rank_digits = rank_in_record_name(name);
    if (!rank_digits) continue;
    if (written_since) {
      std::error_code time_error;
      const auto written = std::filesystem::last_write_time(file.path(), time_error);
      if (time_error || written < *written_since) continue;
    }
    RankFlightRecord record = read_record(file.path());
    if (std::to_string(record.rank) != *rank_digits) {
      throw FormatError(file.path().string() + ": holds rank " + std::to_string(record.rank) +
                        "'s record");
    }
    records.push_back(std::move(record));
  }
  std::sort(records.begin(), records.end(),
            [](const RankFlightRecord& a, const RankFlightRecord& b) { return a.rank < b.rank; });
  return records;
}

std::vector<std::string> diagnose_flight_records(const std::vector<RankFlightRecord>& records,
                                                 std::optional<int> world_size) {
  std::vector<std::string> findings;
  int highest = -1;
  std::set<int> seen;
  for (const RankFlightRecord& record : records) {
    highest = std::max(highest, record.rank);
    seen.insert(record.rank);
  }
  std::optional<int> recorded_world;
  for (const RankFlightRecord& record : records) {
    if (record.world_size)
      recorded_world = std::max(recorded_world.value_or(0), *record.world_size);
  }
  if (!world_size) world_size = recorded_world;
  const int world = world_size.value_or(highest + 1);
  for (int rank = 0; rank < world; ++rank) {
    if (!seen.contains(rank)) {
      findings.push_back("rank " + std::to_string(rank) +
                         " left no flight record: it was killed or stopped, or it was still "
                         "waiting without an error when the job ended");
    }
  }
  if (!world_size && !records.empty()) {
    findings.push_back("(the world is taken as " + std::to_string(world) +
                       " ranks, one more than the highest rank recorded; --world N says it)");
  }

  // The first pair two ranks issued differently, by group, lowest sequence number first.
  std::map<std::pair<std::string, std::uint64_t>, std::vector<std::pair<int, const FlightOp*>>>
      by_op;
  for (const RankFlightRecord& record : records) {
    for (const FlightOp& op : record.ops) {
      by_op[{op.group, op.sequence_number}].push_back({record.rank, &op});
    }
  }
  std::map<std::string, std::map<int, OpsBySequence>> ops_by_group;
  for (const RankFlightRecord& record : records) {
    for (const FlightOp& op : record.ops) {
      ops_by_group[op.group][record.rank][op.sequence_number] = &op;
    }
  }
  std::set<std::string> mismatched_groups;
  for (const auto& [key, issued] : by_op) {
    if (mismatched_groups.contains(key.first)) continue;
    for (const auto& [rank, op] : issued) {
      if (same_op(*op, *issued.front().second)) continue;
      findings.push_back("ranks issued different ops as #" + std::to_string(key.second) +
                         " of group " + key.first + ": rank " +
                         std::to_string(issued.front().first) + " " +
                         describe(*issued.front().second) + ", rank " + std::to_string(rank) + " " +
                         describe(*op));
      if (std::optional<std::string> shift =
              explain_shift(key.second, ops_by_group.at(key.first))) {
        findings.push_back(std::move(*shift));
      }
      mismatched_groups.insert(key.first);
      break;
    }
  }

  // Per group, the ranks whose last op comes before the others'.
  std::map<std::string, std::vector<std::pair<int, const FlightOp*>>> last_by_group;
  for (const RankFlightRecord& record : records) {
    std::map<std::string, const FlightOp*> last;
    for (const FlightOp& op : record.ops) {
      const FlightOp*& mine = last[op.group];
      if (mine == nullptr || op.sequence_number > mine->sequence_number) mine = &op;
    }
    for (const auto& [group, op] : last) last_by_group[group].push_back({record.rank, op});
  }
  for (const auto& [group, lasts] : last_by_group) {
    std::uint64_t furthest = 0;
    for (const auto& [rank, op] : lasts) furthest = std::max(furthest, op->sequence_number);
    for (const auto& [rank, op] : lasts) {
      if (op->sequence_number < furthest) {
        findings.push_back("rank " + std::to_string(rank) + " is behind in group " + group +
                           ": its last op is " + describe(*op) + ", others reached #" +
                           std::to_string(furthest));
      }
    }
  }

  // The op each rank waits in: its first not completed.
  for (const RankFlightRecord& record : records) {
    const auto waiting = std::find_if(record.ops.begin(), record.ops.end(),
                                      [](const FlightOp& op) { return op.state != "completed"; });
    if (waiting != record.ops.end()) {
      findings.push_back("rank " + std::to_string(record.rank) + " stopped in " +
                         describe(*waiting) + ": " + record.reason);
    } else {
      findings.push_back("rank " + std::to_string(record.rank) +
                         " had completed every recorded op: " + record.reason);
    }
  }
  return findings;
}

std::vector<std::string> flight_verdict_since(const std::filesystem::path& run_dir, int world_size,
                                              std::filesystem::file_time_type since) {
  std::error_code error;
  if (!std::filesystem::is_directory(run_dir / "flight", error)) return {};
  const std::vector<RankFlightRecord> records = read_flight_records(run_dir, since);
  if (records.empty()) return {};
  return diagnose_flight_records(records, world_size);
}

}  // namespace zt::engine
