// The flight recorder end to end (Note [The flight recorder]): `zerotrain launch` with two
// ranks, rank 1 stopped (SIGSTOP) before step 3; rank 0 times out in a collective of step 3
// and leaves run.dir/flight/rank-0.json, whose last op is not completed while every op of
// step 1 is, and says where it is on stderr; `zerotrain diagnose` names the silent rank and
// the op rank 0 stopped in.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "data/json_document.h"
#include "tests/integration/command_harness.h"

namespace zt::launch::testing {
namespace {

TEST(FlightRecord, ARankThatTimesOutLeavesTheOpsItWasIn) {
  TempDir dir;
  constexpr int kTimeoutS = 4;
  LaunchOptions options;
  options.nproc_per_node = 2;
  options.grace_period = std::chrono::milliseconds(1000);
  options.status_interval = std::chrono::milliseconds(1000);
  options.rank_command = {zerotrain_exe(),
                          "train",
                          tiny_config(),
                          "--set",
                          "run.dir=" + (dir / "run"),
                          "--set",
                          "train.steps=1000",
                          "--set",
                          "zero.stage=3",
                          "--set",
                          "runtime.comm_timeout_s=" + std::to_string(kTimeoutS)};
  const LaunchResult result =
      launch(options, dir, {{"ZEROTRAIN_FAULT", "rank=1,step=3,signal=19"}});  // SIGSTOP
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const std::string path = dir / "run/flight/rank-0.json";
  ASSERT_TRUE(std::filesystem::is_regular_file(path)) << result.err;
  EXPECT_NE(result.err.find("collectives are in " + path), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "run/flight/rank-1.json"))
      << "rank 1 was stopped, then killed: it wrote nothing";

  const data::JsonValue record = data::parse_json(read_file(path), path);
  EXPECT_EQ(record.find("rank")->as_integer("rank"), 0);
  // The error that stopped it, naming the op (a Work's description).
  EXPECT_NE(record.find("reason")->as_string("reason").find(" on rank 0 of 2"), std::string::npos)
      << record.find("reason")->as_string("reason");
  const auto& entries = record.find("entries")->as_array("entries");
  ASSERT_FALSE(entries.empty());
  // Step 1's ops all completed; the last op (submitted in step 3, or at the end of step 2
  // for step 3's first gathers, which rank 1 may have stopped before running) did not.
  for (const data::JsonValue& entry : entries) {
    if (entry.find("step")->as_integer("step") == 1) {
      EXPECT_EQ(entry.find("state")->as_string("state"), "completed")
          << "op " << entry.find("id")->as_integer("id") << " of step 1";
    }
    EXPECT_FALSE(entry.find("group")->as_string("group").empty());
  }
  const data::JsonValue& last = entries.back();
  const std::int64_t last_step = last.find("step")->as_integer("step");
  EXPECT_TRUE(last_step == 2 || last_step == 3) << last_step;
  EXPECT_NE(last.find("state")->as_string("state"), "completed");
  EXPECT_LT(seconds(result.elapsed), kTimeoutS + 1.0 + 15.0) << result.err;

  // zerotrain diagnose reads it: rank 1 left nothing, rank 0 stopped in the op it waited in.
  const CommandResult diagnosis =
      run_command({zerotrain_exe(), "diagnose", dir / "run", "--world", "2"}, dir);
  EXPECT_EQ(diagnosis.exit_code, 0) << diagnosis.err;
  EXPECT_NE(diagnosis.out.find("1 flight record in "), std::string::npos) << diagnosis.out;
  EXPECT_NE(diagnosis.out.find("- rank 1 left no flight record"), std::string::npos)
      << diagnosis.out;
  // The op it stopped in is its first not completed (prefetches may follow it).
  const data::JsonValue* stuck = nullptr;
  for (const data::JsonValue& entry : entries) {
    if (entry.find("state")->as_string("state") != "completed") {
      stuck = &entry;
      break;
    }
  }
  ASSERT_NE(stuck, nullptr);
  EXPECT_NE(diagnosis.out.find("- rank 0 stopped in " + stuck->find("kind")->as_string("kind") +
                               " #" + std::to_string(stuck->find("seq")->as_integer("seq")) +
                               " of group " + stuck->find("group")->as_string("group")),
            std::string::npos)
      << diagnosis.out;
}

}  // namespace
}  // namespace zt::launch::testing
