// zerotrain diagnose's reading of flight records (Note [Diagnosing from flight records]):
// written by the real recorder, a rank that took another branch shows as the first op the
// ranks issued differently, a rank that never submitted what the others wait in shows as
// behind, a missing rank as silent, and a damaged record is refused naming its file.
#include "runtime/engine/flight_diagnosis.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "comm/flight_recorder.h"
#include "core/error.h"
#include "core/memory_tracker.h"
#include "support/temp_dir.h"

namespace zt::engine {
namespace {

using comm::CollectiveKind;

// One rank's record: `ops` in order (kind, element count), the last left running.
void write_record(const std::filesystem::path& run_dir, int rank,
                  const std::vector<std::pair<CollectiveKind, std::int64_t>>& ops) {
  MemoryTracker tracker(Device::cpu());
  tracker.set_step(3);
  tracker.set_phase("backward");
  comm::FlightRecorder recorder(rank, 64, &tracker);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::uint64_t id =
        recorder.enqueued("world/gradients", i + 1, ops[i].first, ops[i].second, DType::kF32, -1);
    recorder.started(id);
    if (i + 1 < ops.size()) recorder.ended(id);
  }
  std::filesystem::create_directories(run_dir / "flight");
  std::ofstream(run_dir / "flight" / ("rank-" + std::to_string(rank) + ".json"))
      << recorder.to_json("all_gather #2 did not complete within 4000 ms");
}

struct PhasedOp {
  CollectiveKind kind;
  std::int64_t numel;
  std::string phase;
};

// One rank's record of ops of group world/parameters in step 3, each submitted in its phase,
// numbered from 1; every op completed.
void write_phased_record(const std::filesystem::path& run_dir, int rank,
                         const std::vector<PhasedOp>& ops) {
  MemoryTracker tracker(Device::cpu());
  tracker.set_step(3);
  comm::FlightRecorder recorder(rank, 64, &tracker);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    tracker.set_phase(ops[i].phase);
    const std::uint64_t id =
        recorder.enqueued("world/parameters", i + 1, ops[i].kind, ops[i].numel, DType::kF32, -1);
    recorder.started(id);
    recorder.ended(id);
  }
  std::filesystem::create_directories(run_dir / "flight");
  std::ofstream(run_dir / "flight" / ("rank-" + std::to_string(rank) + ".json"))
      << recorder.to_json("SIGTERM: the rank was told to stop");
}

// A model's gathers: equal sizes block after block, told apart by their phases only.
std::vector<PhasedOp> gathers_then_loss() {
  return {{CollectiveKind::kAllGather, 256, "forward embeddings"},
          {CollectiveKind::kAllGather, 96, "forward block 0"},
          {CollectiveKind::kAllGather, 96, "forward block 1"},
          {CollectiveKind::kAllGather, 96, "forward block 2"},
          {CollectiveKind::kAllReduce, 1, "loss"}};
}

bool has_finding(const std::vector<std::string>& findings, const std::string& text) {
  for (const std::string& finding : findings) {
    if (finding.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string joined(const std::vector<std::string>& findings) {
  std::string all;
  for (const std::string& finding : findings) all += finding + "\n";
  return all;
}

TEST(FlightDiagnosis, NamesTheFirstOpTheRanksIssuedDifferently) {
  testing::TempDir dir;
  write_record(dir.path(), 0, {{CollectiveKind::kAllReduce, 16}, {CollectiveKind::kAllGather, 64}});
  write_record(dir.path(), 1,
               {{CollectiveKind::kAllReduce, 16}, {CollectiveKind::kReduceScatter, 64}});
  const auto findings = diagnose_flight_records(read_flight_records(dir.path()), 2);
  EXPECT_TRUE(has_finding(findings,
                          "ranks issued different ops as #2 of group world/gradients: rank 0 "
                          "all_gather #2"))
      << joined(findings);
  EXPECT_TRUE(has_finding(findings, "rank 1 reduce_scatter #2")) << joined(findings);
  EXPECT_TRUE(has_finding(findings, "step 3, phase \"backward\"")) << joined(findings);
  EXPECT_FALSE(has_finding(findings, "left no flight record")) << joined(findings);
  EXPECT_FALSE(has_finding(findings, "behind")) << joined(findings);
}

TEST(FlightDiagnosis, NamesTheRankBehindTheSilentRankAndWhereEachStopped) {
  testing::TempDir dir;
  write_record(dir.path(), 0,
               {{CollectiveKind::kAllReduce, 16},
                {CollectiveKind::kAllGather, 64},
                {CollectiveKind::kAllGather, 64}});
  write_record(dir.path(), 1, {{CollectiveKind::kAllReduce, 16}, {CollectiveKind::kAllGather, 64}});
  const auto findings = diagnose_flight_records(read_flight_records(dir.path()), 3);
  EXPECT_TRUE(has_finding(findings, "rank 2 left no flight record")) << joined(findings);
  EXPECT_TRUE(has_finding(findings,
                          "rank 1 is behind in group world/gradients: its last op is "
                          "all_gather #2"))
      << joined(findings);
  EXPECT_TRUE(has_finding(findings, "others reached #3")) << joined(findings);
  EXPECT_TRUE(has_finding(findings, "rank 0 stopped in all_gather #3 of group world/gradients"))
      << joined(findings);
  EXPECT_TRUE(has_finding(findings, "did not complete within 4000 ms")) << joined(findings);
  EXPECT_FALSE(has_finding(findings, "issued different ops")) << joined(findings);
  // Without --world, the world is the ranks seen, and the verdict says so.
  const auto unsized = diagnose_flight_records(read_flight_records(dir.path()), std::nullopt);
  EXPECT_FALSE(has_finding(unsized, "left no flight record")) << joined(unsized);
  EXPECT_TRUE(has_finding(unsized, "the world is taken as 2 ranks")) << joined(unsized);
}

// Rank 2 of 3 left out block 1's gather: its later ops have the others' sequence numbers less
// one. The sizes alone would pair block 2's gather with block 1's without a word.
TEST(FlightDiagnosis, NamesTheOpARankLeftOutWhenItsLaterOpsAreTheOthersShiftedByOne) {
  testing::TempDir dir;
  std::vector<PhasedOp> skipping = gathers_then_loss();
  skipping.erase(skipping.begin() + 2);
  write_phased_record(dir.path(), 0, gathers_then_loss());
  write_phased_record(dir.path(), 1, gathers_then_loss());
  write_phased_record(dir.path(), 2, skipping);
  const auto findings = diagnose_flight_records(read_flight_records(dir.path()), 3);
  EXPECT_TRUE(has_finding(findings, "ranks issued different ops as #3 of group world/parameters"))
      << joined(findings);
  EXPECT_TRUE(has_finding(findings,
                          "rank 2 did not issue all_gather #3 of group world/parameters (96 f32; "
                          "step 3, phase \"forward block 1\"; completed): its ops from #3 on are "
                          "the others' from #4 on"))
      << joined(findings);
  EXPECT_FALSE(has_finding(findings, "or rank")) << joined(findings);  // three ranks: no doubt

  // Two ranks cannot say which one is odd, and the finding says so; the same records read
  // the other way round are rank 0 issuing one op more.
  testing::TempDir pair;
  write_phased_record(pair.path(), 0, gathers_then_loss());
  write_phased_record(pair.path(), 1, skipping);
  const auto two = diagnose_flight_records(read_flight_records(pair.path()), 2);
  EXPECT_TRUE(has_finding(two, "rank 1 did not issue all_gather #3")) << joined(two);
  EXPECT_TRUE(has_finding(two, "(or rank 0 issued one op more)")) << joined(two);

  testing::TempDir extra;
  std::vector<PhasedOp> more = gathers_then_loss();
  more.insert(more.begin() + 1, {CollectiveKind::kBroadcast, 8, "forward embeddings"});
  write_phased_record(extra.path(), 0, gathers_then_loss());
  write_phased_record(extra.path(), 1, gathers_then_loss());
  write_phased_record(extra.path(), 2, more);
  const auto one_more = diagnose_flight_records(read_flight_records(extra.path()), 3);
  EXPECT_TRUE(has_finding(one_more,
                          "rank 2 issued an op the others did not: its broadcast #2 of group "
                          "world/parameters (8 f32"))
      << joined(one_more);
}

// Ranks that agree throughout give no mismatch, whatever their phases.
TEST(FlightDiagnosis, AgreeingRanksWithPhasesGiveNoMismatch) {
  testing::TempDir dir;
  write_phased_record(dir.path(), 0, gathers_then_loss());
  write_phased_record(dir.path(), 1, gathers_then_loss());
  const auto findings = diagnose_flight_records(read_flight_records(dir.path()), 2);
  EXPECT_FALSE(has_finding(findings, "different ops")) << joined(findings);
  EXPECT_FALSE(has_finding(findings, "did not issue")) << joined(findings);
}

TEST(FlightDiagnosis, RefusesADamagedRecordNamingItsFileAndARunWithoutRecords) {
  testing::TempDir dir;
  EXPECT_THROW(read_flight_records(dir.path()), IoError);
  std::filesystem::create_directories(dir.path() / "flight");
  std::ofstream(dir.path() / "flight" / "rank-0.json") << R"({"rank": 0, "entries": []})";
  try {
    read_flight_records(dir.path());
    FAIL() << "a record without a reason";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("rank-0.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"reason\""), std::string::npos) << e.what();
  }
  std::ofstream(dir.path() / "flight" / "rank-0.json")
      << R"({"rank": 1, "reason": "", "entries": []})";
  EXPECT_THROW(read_flight_records(dir.path()), FormatError) << "rank 1's record as rank-0.json";
}

TEST(FlightDiagnosis, TakesTheWorldFromTheRecordsAndRefusesARankOutsideIt) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.path() / "flight");
  // The real recorder says its world: rank 2 of 3 wrote, ranks 0 and 1 did not.
  MemoryTracker tracker(Device::cpu());
  comm::FlightRecorder recorder(2, 8, &tracker, /*world_size=*/3);
  recorder.ended(recorder.enqueued("world", 0, CollectiveKind::kBarrier, 0, DType::kF32, -1));
  std::ofstream(dir.path() / "flight" / "rank-2.json") << recorder.to_json("SIGTERM");
  const auto findings = diagnose_flight_records(read_flight_records(dir.path()), std::nullopt);
  EXPECT_TRUE(has_finding(findings, "rank 0 left no flight record")) << joined(findings);
  EXPECT_TRUE(has_finding(findings, "rank 1 left no flight record")) << joined(findings);
  EXPECT_FALSE(has_finding(findings, "the world is taken as")) << joined(findings);

  std::ofstream(dir.path() / "flight" / "rank-2.json")
      << R"({"rank": 2, "world_size": 2, "reason": "", "entries": []})";
  try {
    read_flight_records(dir.path());
    FAIL() << "rank 2 of a world of 2";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("rank-2.json"), std::string::npos) << e.what();
  }
}

TEST(FlightDiagnosis, TheLaunchersVerdictReadsOnlyRecordsWrittenSinceTheAttemptBegan) {
  testing::TempDir dir;
  const std::filesystem::file_time_type before = std::filesystem::file_time_type::clock::now();
  EXPECT_TRUE(flight_verdict_since(dir.path(), 2, before).empty()) << "no flight directory";
  write_record(dir.path(), 0, {{CollectiveKind::kAllReduce, 16}});
  write_record(dir.path(), 1, {{CollectiveKind::kAllReduce, 16}});
  // Rank 1's record is an earlier attempt's: older than the attempt's start.
  const auto old_time = before - std::chrono::hours(1);
  std::filesystem::last_write_time(dir.path() / "flight" / "rank-1.json", old_time);
  const std::vector<std::string> findings = flight_verdict_since(dir.path(), 2, before);
  EXPECT_TRUE(has_finding(findings, "rank 1 left no flight record")) << joined(findings);
  EXPECT_TRUE(has_finding(findings, "rank 0 stopped in all_reduce")) << joined(findings);
  EXPECT_TRUE(
      flight_verdict_since(dir.path(), 2,
                           std::filesystem::file_time_type::clock::now() + std::chrono::hours(1))
          .empty())
      << "every record older than the attempt";
}

}  // namespace
}  // namespace zt::engine
