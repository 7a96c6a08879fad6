// A run.dir holds one run at a time and keeps an earlier run's outputs unless the config
// says to replace them; config.toml records absolute paths.
#include "runtime/engine/run_directory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "core/config/config_schema.h"
#include "core/error.h"
#include "runtime/engine/trainer.h"
#include "support/temp_dir.h"

namespace zt::engine {
namespace {

namespace fs = std::filesystem;
using zt::testing::TempDir;

Config config_for(const fs::path& dir, std::vector<std::string> overrides = {}) {
  overrides.insert(overrides.begin(),
                   {"run.dir=" + dir.string(), "model.input_dim=8", "model.hidden_dim=8",
                    "model.num_classes=2", "train.micro_batch_size=4", "train.steps=2"});
  return parse_config_text("", "test.toml", overrides);
}

int count_lines(const fs::path& path) {
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

// One single-rank training run that writes its run.dir, as `zerotrain train` does.
void train_into(const Config& config) {
  comm::MemoryStore store;
  MemoryTracker tracker{Device::cpu()};
  auto comm = comm::create_cpu_communicator(store, 0, 1);
  TrainerOptions options = quiet_trainer_options();
  options.write_run_dir = true;
  Trainer(config, *comm, tracker, options).run();
}

TEST(RunDirectory, SecondClaimWhileTheFirstHoldsItIsRefusedAtOnceNamingItsPid) {
  TempDir dir;
  const Config config = config_for(dir / "run");
  const auto first = RunDirectory::claim(config);
  const auto start = std::chrono::steady_clock::now();
  try {
    RunDirectory::claim(config);
    FAIL() << "a second claim succeeded";
  } catch (const ConfigError& e) {
    FAIL() << "wrong error: " << e.what();
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("is in use by another run (pid " + std::to_string(::getpid())),
              std::string::npos)
        << message;
    EXPECT_NE(message.find((dir / "run").string()), std::string::npos) << message;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(RunDirectory, LockIsReleasedWithTheClaim) {
  TempDir dir;
  const Config config = config_for(dir / "run");
  RunDirectory::claim(config).reset();
  EXPECT_NO_THROW(RunDirectory::claim(config));
}

TEST(RunDirectory, SecondRunAfterTheFirstIsRefusedNamingTheFileAndTheKey) {
  TempDir dir;
  train_into(config_for(dir / "run"));
  ASSERT_EQ(count_lines(dir / "run" / "metrics.jsonl"), 2);
  const std::string before = [&] {
    std::ifstream in(dir / "run" / "config.toml");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  try {
    train_into(config_for(dir / "run", {"train.steps=3"}));
    FAIL() << "the second run was not refused";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("--set run.dir=", 0), 0u) << message;  // where run.dir was set
    EXPECT_NE(message.find((dir / "run" / "metrics.jsonl").string()), std::string::npos) << message;
    EXPECT_NE(message.find("run.overwrite = true"), std::string::npos) << message;
  }
  EXPECT_EQ(count_lines(dir / "run" / "metrics.jsonl"), 2) << "the first run's metrics changed";
  std::ifstream in(dir / "run" / "config.toml");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), before);
}

TEST(RunDirectory, OverwriteTrueReplacesTheEarlierOutputs) {
  TempDir dir;
  train_into(config_for(dir / "run"));
  train_into(config_for(dir / "run", {"train.steps=3", "run.overwrite=true"}));
  EXPECT_EQ(count_lines(dir / "run" / "metrics.jsonl"), 3);
  EXPECT_EQ(load_config_file(dir / "run" / "config.toml", {}).train.steps, 3);
}

// Every output of the earlier run goes (the memory profile's too), and no checkpoint does:
// not the earlier run's in run.dir/checkpoints, nor the one a resumed run starts from.
TEST(RunDirectory, OverwriteReplacesEveryEarlierOutputAndNoCheckpoint) {
  TempDir dir;
  const fs::path run = dir / "run";
  train_into(config_for(run, {"checkpoint.every_steps=2"}));
  const fs::path checkpoint = run / "checkpoints" / "step-00000002" / "manifest.toml";
  ASSERT_TRUE(fs::exists(checkpoint));
  ASSERT_TRUE(fs::exists(run / "run_id"));
  // What a memory-profiling run leaves (RankSession writes these beside metrics.jsonl).
  std::ofstream(run / "memory.html") << "<html>earlier</html>";
  fs::create_directories(run / "memory");
  std::ofstream(run / "memory" / "rank-0.json") << "{}";
  std::ofstream(run / "memory.json") << "{}";

  train_into(config_for(run, {"train.steps=3", "run.overwrite=true"}));
  EXPECT_FALSE(fs::exists(run / "memory.html"));
  EXPECT_FALSE(fs::exists(run / "memory"));
  EXPECT_FALSE(fs::exists(run / "memory.json"));
  EXPECT_FALSE(fs::exists(run / "run_id")) << "a run without checkpoints names no run";
  EXPECT_EQ(count_lines(run / "metrics.jsonl"), 3);
  EXPECT_TRUE(fs::exists(checkpoint)) << "run.overwrite removed a checkpoint";

  std::ofstream(run / "memory.html") << "<html>earlier</html>";
  train_into(config_for(run, {"train.steps=3", "run.overwrite=true",
                              "checkpoint.resume=" + checkpoint.parent_path().string()}));
  EXPECT_TRUE(fs::exists(checkpoint)) << "the resumed run removed the checkpoint it loaded";
  EXPECT_TRUE(fs::exists(run / "memory.html")) << "a resumed run continues the outputs";
}

// checkpoint.resume = "latest" that finds no checkpoint starts a new run at step 1: it is
// refused as any new run into a run.dir holding another run's outputs is.
TEST(RunDirectory, ResumeLatestFindingNoCheckpointIsRefusedAsANewRun) {
  TempDir dir;
  train_into(config_for(dir / "run", {"train.steps=6"}));
  ASSERT_EQ(count_lines(dir / "run" / "metrics.jsonl"), 6);
  EXPECT_THROW(train_into(config_for(dir / "run", {"train.steps=3", "checkpoint.resume=latest"})),
               ConfigError);
  EXPECT_EQ(count_lines(dir / "run" / "metrics.jsonl"), 6) << "the earlier run's metrics changed";
  // With a checkpoint of the run run.dir names, "latest" continues its outputs.
  train_into(config_for(dir / "run", {"train.steps=4", "checkpoint.every_steps=2",
                                      "checkpoint.resume=latest", "run.overwrite=true"}));
  ASSERT_EQ(count_lines(dir / "run" / "metrics.jsonl"), 4);
  train_into(config_for(dir / "run",
                        {"train.steps=6", "checkpoint.every_steps=2", "checkpoint.resume=latest"}));
  EXPECT_EQ(count_lines(dir / "run" / "metrics.jsonl"), 6);
}

// Every string key of the schema is a path (or listed here as a word): a new path key left
// unmarked would be saved relative, and a rerun of config.toml from elsewhere would not find
// what the run used.
TEST(RunDirectory, SavedConfigMakesEveryPathKeyOfTheSchemaAbsolute) {
  const std::vector<std::string> not_paths = {};  // string keys whose values are not paths
  TempDir dir;
  Config config = config_for("run");
  std::vector<const KeySpec*> paths;
  for (const SectionSpec& section : config_schema()) {
    for (const KeySpec& key : section.keys) {
      if (key.type != KeyType::kString) continue;
      if (std::ranges::find(not_paths, key.full_name()) != not_paths.end()) continue;
      EXPECT_TRUE(key.is_path) << key.full_name() << " is a string key not marked as a path";
      paths.push_back(&key);
      key.assign(config, key.string_list ? "rel/" + key.name + "-a\nrel/" + key.name + "-b"
                                         : "rel/" + key.name);
    }
  }
  ASSERT_GE(paths.size(), 8u);
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path());
  const Config saved = with_absolute_paths(config);
  fs::current_path(cwd);
  for (const KeySpec* key : paths) {
    const std::string value = std::get<std::string>(key->read(saved));
    const std::string expected = key->string_list
                                     ? (dir / "rel" / (key->name + "-a")).string() + "\n" +
                                           (dir / "rel" / (key->name + "-b")).string()
                                     : (dir / "rel" / key->name).string();
    EXPECT_EQ(value, expected) << key->full_name();
  }
  config.checkpoint.resume = "latest";
  EXPECT_EQ(with_absolute_paths(config).checkpoint.resume, "latest");
}

TEST(RunDirectory, SavedConfigHasAbsolutePathsThatWorkFromAnotherDirectory) {
  TempDir dir;
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path());
  Config config = config_for("run");
  config.data.path = "data/tokens.bin";
  config.data.tokenizer = "data/tokenizer.json";
  {
    const auto claimed = RunDirectory::claim(config);
    claimed->write_config(config);
  }
  fs::current_path(cwd);
  const Config saved = load_config_file(dir / "run" / "config.toml", {});
  EXPECT_EQ(saved.run.dir, (dir / "run").string());
  EXPECT_EQ(saved.data.path, (dir / "data" / "tokens.bin").string());
  EXPECT_TRUE(fs::path(saved.data.path).is_absolute());
  EXPECT_EQ(saved.data.tokenizer, (dir / "data" / "tokenizer.json").string());
}

}  // namespace
}  // namespace zt::engine
