// Checkpoints through real processes: a rank SIGKILLed at every phase of a save leaves the
// previous checkpoint loadable (and its files untouched) and the partial one ignored with a
// message; `zerotrain launch --max-restarts 1` recovers from a failed rank with the losses of
// an unfailed run; `zerotrain checkpoint inspect` verifies, and `export` writes safetensors
// that the format's reference reader (Python's safetensors, when installed) reads back, and
// refuses to replace an existing OUT or config.json unless --overwrite.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "runtime/checkpoint/checkpoint_reader.h"
#include "support/test_paths.h"
#include "support/tiny_runs.h"
#include "support/zerotrain_cli.h"

namespace zt {
namespace {

namespace fs = std::filesystem;
using testing::ProgramResult;
using testing::TempDir;

constexpr int kSteps = 6;

// `zerotrain launch --nproc-per-node 2` of the tiny config, 6 steps, saving every 2.
std::vector<std::string> launch_args(const fs::path& run_dir, std::vector<std::string> more = {}) {
  std::vector<std::string> args{"launch", "--nproc-per-node",
                                "2",      testing::config_path("tiny.toml"),
                                "--set",  "train.steps=" + std::to_string(kSteps),
                                "--set",  "run.dir=" + run_dir.string(),
                                "--set",  "checkpoint.every_steps=2",
                                "--set",  "runtime.comm_timeout_s=30"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

ProgramResult zerotrain_with(const TempDir& dir, std::vector<std::string> args,
                             const std::string& name, const testing::EnvChanges& env) {
  args.insert(args.begin(), zt::testing::zerotrain_binary());
  return testing::run_program(args, dir.path(), name, env);
}

// Every file of a directory with its contents.
std::map<std::string, std::string> contents(const fs::path& directory) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(directory)) {
    files[entry.path().filename().string()] = testing::read_text(entry.path());
  }
  return files;
}

const std::vector<std::string>& reference_losses() {
  static const std::vector<std::string> losses = [] {
    const TempDir dir;
    const ProgramResult run = testing::zerotrain(dir, launch_args(dir / "run"), "reference");
    EXPECT_EQ(run.exit_code, 0) << run.output();
    return testing::step_numbers(dir / "run/metrics.jsonl");
  }();
  return losses;
}

class KilledDuringSave : public ::testing::TestWithParam<std::string> {};

TEST_P(KilledDuringSave, LeavesThePreviousCheckpointLoadableAndThePartialOneIgnored) {
  const std::string phase = GetParam();
  const TempDir dir;
  const fs::path run_dir = dir / "run";
  const fs::path checkpoints = run_dir / "checkpoints";
  // Rank 0 commits (writes the manifest); every rank writes its own shard.
  const std::string rank = phase == "save-manifest" ? "0" : "1";
  const ProgramResult killed =
      zerotrain_with(dir, launch_args(run_dir), "killed",
                     {{"ZEROTRAIN_FAULT", "rank=" + rank + ",step=4,signal=9,at=" + phase}});
  ASSERT_EQ(killed.exit_code, 1) << killed.output();
  EXPECT_NE(
      killed.err.find("injected fault (ZEROTRAIN_FAULT) on rank " + rank + " at step 4, " + phase),
      std::string::npos)
      << killed.output();
  ASSERT_TRUE(fs::exists(checkpoints / "step-00000002/manifest.toml")) << killed.output();
  EXPECT_FALSE(fs::exists(checkpoints / "step-00000004")) << "a partial save became visible";
  EXPECT_TRUE(fs::exists(checkpoints / "step-00000004.tmp")) << killed.output();
  const auto saved_before = contents(checkpoints / "step-00000002");

  const ProgramResult resumed = zerotrain_with(
      dir, launch_args(run_dir, {"--set", "checkpoint.resume=latest"}), "resumed", {});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output();
  EXPECT_NE(resumed.err.find("ignoring '" + (checkpoints / "step-00000004.tmp").string() +
                             "', a save that did not finish"),
            std::string::npos)
      << resumed.output();
  EXPECT_NE(
      resumed.err.find("resumed from '" + (checkpoints / "step-00000002").string() + "': step 2"),
      std::string::npos)
      << resumed.output();
  // metrics.jsonl keeps steps 1-2 of the killed run and continues from step 3.
  EXPECT_EQ(testing::step_numbers(run_dir / "metrics.jsonl"), reference_losses());
  EXPECT_EQ(contents(checkpoints / "step-00000002"), saved_before) << "step 2 was rewritten";
  EXPECT_TRUE(fs::exists(checkpoints / "step-00000006/manifest.toml"));
  EXPECT_FALSE(fs::exists(checkpoints / "step-00000004.tmp")) << "the partial save was not cleared";
}

INSTANTIATE_TEST_SUITE_P(EveryPhase, KilledDuringSave,
                         ::testing::Values("save-staged", "save-writing", "save-written",
                                           "save-manifest"),
                         [](const auto& test) {
                           std::string name = test.param;
                           name.erase(name.find('-'), 1);
                           return name;
                         });

TEST(MaxRestarts, RecoversFromAFailedRankWithTheLossesOfAnUnfailedRun) {
  const TempDir dir;
  const fs::path run_dir = dir / "run";
  std::vector<std::string> args = launch_args(run_dir);
  args.insert(args.begin() + 1, {"--max-restarts", "1"});
  const ProgramResult run =
      zerotrain_with(dir, args, "restarted", {{"ZEROTRAIN_FAULT", "rank=1,step=6,exit=3"}});
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_NE(run.err.find("zerotrain launch: restart 1 of 1: rank 1 exited with status 3"),
            std::string::npos)
      << run.output();
  // The newest committed checkpoint: step 4's, or step 2's when step 4's files were still
  // being written at the step boundary before the fault (a checkpoint becomes visible at the
  // first boundary after its files are written, Note [Checkpoint saving]; which one it is
  // depends on the machine's speed). Either way the losses are those of an unfailed run.
  const auto resumed_from = [&](const char* step) {
    return run.err.find("resuming from the newest checkpoint, " +
                        (run_dir / "checkpoints" / step).string()) != std::string::npos;
  };
  EXPECT_TRUE(resumed_from("step-00000004") || resumed_from("step-00000002")) << run.output();
  EXPECT_EQ(testing::step_numbers(run_dir / "metrics.jsonl"), reference_losses());
}

TEST(MaxRestarts, GivesUpAfterTheLastRestartAndNeverRestartsAConfigError) {
  const TempDir dir;
  const auto args = [&](const std::string& run) {
    std::vector<std::string> a = launch_args(dir / run);
    a.insert(a.begin() + 1, {"--max-restarts", "1"});
    return a;
  };
  // A failure before any checkpoint: the restart starts over, and finishes.
  const ProgramResult first =
      zerotrain_with(dir, args("first"), "first", {{"ZEROTRAIN_FAULT", "rank=0,step=1,exit=3"}});
  EXPECT_EQ(testing::count_of(first.err, "zerotrain launch: restart 1 of 1"), 1u) << first.output();
  EXPECT_NE(first.err.find("no complete checkpoint in"), std::string::npos) << first.output();
  EXPECT_EQ(first.exit_code, 0) << "the restart has no fault and finishes" << first.output();
  // A fault in every attempt: one restart, then the launcher gives up.
  const ProgramResult twice = zerotrain_with(
      dir, args("twice"), "twice", {{"ZEROTRAIN_FAULT", "rank=1,step=3,exit=3,attempt=-1"}});
  EXPECT_EQ(twice.exit_code, 1) << twice.output();
  EXPECT_EQ(testing::count_of(twice.err, "zerotrain launch: restart 1 of 1"), 1u) << twice.output();
  EXPECT_EQ(testing::count_of(twice.err, "rank 1 (pid"), 2u) << twice.output();
  // Exit 2 (a usage or config error) would fail the same way again: no restart.
  const ProgramResult usage =
      zerotrain_with(dir, args("usage"), "usage", {{"ZEROTRAIN_FAULT", "rank=0,step=1,exit=2"}});
  EXPECT_EQ(usage.exit_code, 2) << usage.output();
  EXPECT_EQ(usage.err.find("restart 1 of 1"), std::string::npos) << usage.output();
  const ProgramResult multinode =
      testing::zerotrain(dir,
                         {"launch", "--nproc-per-node", "1", "--nnodes", "2", "--max-restarts", "1",
                          "--master-addr", "127.0.0.2", testing::config_path("tiny.toml")},
                         "multinode");
  EXPECT_EQ(multinode.exit_code, 2) << multinode.output();
  EXPECT_NE(multinode.err.find("--max-restarts works on one node"), std::string::npos)
      << multinode.output();
}

// ---- inspect and export

class SavedCheckpoint : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const ProgramResult run = testing::zerotrain(
        *dir_,
        launch_args(*dir_ / "run", {"--set", "model.tie_embeddings=true", "--set", "zero.stage=3"}),
        "saved");
    ASSERT_EQ(run.exit_code, 0) << run.output();
  }
  static void TearDownTestSuite() { delete dir_; }
  static fs::path checkpoint() { return *dir_ / "run/checkpoints/step-00000006"; }
  static TempDir* dir_;
};
TempDir* SavedCheckpoint::dir_ = nullptr;

TEST_F(SavedCheckpoint, InspectVerifiesEveryFileAndNamesADamagedOne) {
  const ProgramResult ok =
      testing::zerotrain(*dir_, {"checkpoint", "inspect", checkpoint().string()}, "inspect");
  ASSERT_EQ(ok.exit_code, 0) << ok.output();
  EXPECT_NE(ok.out.find("step 6 (6 optimizer updates applied)"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("saved by 2 ranks at zero.stage 3"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("head.lm_head.weight"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("tied to embedding.wte"), std::string::npos) << ok.out;
  EXPECT_EQ(testing::count_of(ok.out, "  ok\n"), 2u) << ok.out;
  EXPECT_NE(ok.out.find("every file matches"), std::string::npos) << ok.out;

  const TempDir copy;
  fs::copy(checkpoint(), copy / "step-00000006", fs::copy_options::recursive);
  const fs::path shard = copy / "step-00000006/rank-00001-of-00002.zts";
  std::string bytes = testing::read_text(shard);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 1);
  std::ofstream(shard, std::ios::binary | std::ios::trunc) << bytes;
  const ProgramResult bad = testing::zerotrain(
      *dir_, {"checkpoint", "inspect", (copy / "step-00000006").string()}, "inspect-bad");
  EXPECT_EQ(bad.exit_code, 1) << bad.output();
  EXPECT_NE(bad.out.find("rank-00001-of-00002.zts"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("DAMAGED"), std::string::npos) << bad.out;
  EXPECT_NE(bad.err.find("'" + shard.string() + "' is corrupt"), std::string::npos) << bad.err;
}

// The safetensors file read back by hand: the header and one tensor's bytes.
struct Safetensors {
  std::string header;
  std::string data;
};
Safetensors read_safetensors(const fs::path& path) {
  const std::string bytes = testing::read_text(path);
  std::uint64_t length = 0;
  std::memcpy(&length, bytes.data(), 8);
  return {bytes.substr(8, length), bytes.substr(8 + length)};
}

std::string tools_python() {
  const fs::path venv = fs::path(zt::testing::source_dir()) / "build/tools-python/bin/python3";
  return fs::exists(venv) ? venv.string() : "python3";
}

TEST_F(SavedCheckpoint, ExportWritesTheFullWeightsAsSafetensors) {
  const TempDir out;
  const fs::path f32 = out / "model.safetensors";
  const fs::path bf16 = out / "model-bf16.safetensors";
  const ProgramResult e32 = testing::zerotrain(
      *dir_, {"checkpoint", "export", checkpoint().string(), f32.string()}, "export");
  ASSERT_EQ(e32.exit_code, 0) << e32.output();
  const ProgramResult e16 =
      testing::zerotrain(*dir_,
                         {"checkpoint", "export", (*dir_ / "run/checkpoints").string(),
                          bf16.string(), "--dtype", "bf16"},
                         "export-bf16");
  ASSERT_EQ(e16.exit_code, 0) << e16.output();
  EXPECT_NE(e16.err.find("using its newest checkpoint"), std::string::npos) << e16.output();

  // The values are the checkpoint's masters, gathered across both ranks' files.
  const checkpoint::CheckpointReader reader(checkpoint());
  const Safetensors s32 = read_safetensors(f32);
  const Safetensors s16 = read_safetensors(bf16);
  std::int64_t elements = 0;
  for (const auto& p : reader.manifest().parameters) {
    if (!p.tied_to.empty()) {
      EXPECT_EQ(s32.header.find("\"" + p.name + "\""), std::string::npos) << "tied, written once";
      continue;
    }
    elements += p.numel();
  }
  std::vector<float> all(static_cast<std::size_t>(elements));
  reader.read(0, 0, elements, all.data());
  ASSERT_EQ(s32.data.size(), all.size() * 4);
  EXPECT_EQ(std::memcmp(s32.data.data(), all.data(), s32.data.size()), 0);
  ASSERT_EQ(s16.data.size(), all.size() * 2);
  for (std::size_t i = 0; i < all.size(); i += 97) {
    std::uint16_t bits = 0;
    std::memcpy(&bits, s16.data.data() + 2 * i, 2);
    ASSERT_EQ(bits, f32_to_bf16_bits(all[i])) << "element " << i;
  }
  EXPECT_NE(s32.header.find("\"zerotrain.tied\":\"head.lm_head.weight=embedding.wte\""),
            std::string::npos)
      << s32.header;

  // The format's reference reader, from PyPI (scripts/test installs it).
  const std::string python = tools_python();
  const ProgramResult probe =
      testing::run_program({python, "-c", "import safetensors, numpy"}, out.path(), "probe");
  if (probe.exit_code != 0) {
    GTEST_SKIP() << "Python's safetensors package is not installed (" << python
                 << "): scripts/python-tools installs it; the byte-level checks above passed";
  }
  const std::string script = R"(
import sys
from safetensors import safe_open
from safetensors.numpy import load_file
tensors = load_file(sys.argv[1])
print("tensors", len(tensors))
print("wte", tensors["embedding.wte"].dtype, tuple(tensors["embedding.wte"].shape),
      repr(float(tensors["embedding.wte"].astype("float64").sum())))
with safe_open(sys.argv[1], framework="np") as f:
    print("step", f.metadata()["zerotrain.step"])
with safe_open(sys.argv[2], framework="np") as f:
    s = f.get_slice("block.0.attn.qkv.weight")
    print("bf16", s.get_dtype(), tuple(s.get_shape()), len(list(f.keys())))
)";
  const ProgramResult read = testing::run_program(
      {python, "-c", script, f32.string(), bf16.string()}, out.path(), "python");
  ASSERT_EQ(read.exit_code, 0) << read.output();
  const std::size_t tensors = reader.manifest().parameters.size() - 1;  // one tie
  EXPECT_NE(read.out.find("tensors " + std::to_string(tensors) + "\n"), std::string::npos)
      << read.out;
  EXPECT_NE(read.out.find("wte float32 (32, 64)"), std::string::npos) << read.out;
  EXPECT_NE(read.out.find("step 6\n"), std::string::npos) << read.out;
  EXPECT_NE(read.out.find("bf16 BF16 (192, 64) " + std::to_string(tensors)), std::string::npos)
      << read.out;
  double wte_sum = 0;
  for (std::int64_t i = 0; i < 32 * 64; ++i) wte_sum += all[static_cast<std::size_t>(i)];
  const std::size_t at = read.out.find("(32, 64) ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NEAR(std::stod(read.out.substr(at + 9)), wte_sum, 1e-9 * (1 + std::abs(wte_sum)));
}

// --names hf: GPT-2's names, Conv1D weights transposed, the tied head left out; read back by
// the format's reference reader and compared with the export under our own names.
TEST_F(SavedCheckpoint, ExportUnderHuggingFaceNamesTransposesConv1DWeights) {
  const TempDir out;
  const fs::path ours = out / "ours.safetensors";
  const fs::path hf = out / "hf.safetensors";
  ASSERT_EQ(testing::zerotrain(
                *dir_, {"checkpoint", "export", checkpoint().string(), ours.string()}, "export")
                .exit_code,
            0);
  const ProgramResult e = testing::zerotrain(
      *dir_, {"checkpoint", "export", checkpoint().string(), hf.string(), "--names", "hf"},
      "export-hf");
  ASSERT_EQ(e.exit_code, 0) << e.output();
  EXPECT_NE(e.out.find("28 tensors under Hugging Face names"), std::string::npos) << e.out;
  const ProgramResult bad = testing::zerotrain(
      *dir_, {"checkpoint", "export", checkpoint().string(), hf.string(), "--names", "gpt"},
      "export-bad");
  EXPECT_EQ(bad.exit_code, 2) << bad.output();
  EXPECT_NE(bad.err.find("--names: expected zerotrain or hf, got 'gpt'"), std::string::npos)
      << bad.err;

  const std::string python = tools_python();
  if (testing::run_program({python, "-c", "import safetensors, numpy"}, out.path(), "probe")
          .exit_code != 0) {
    GTEST_SKIP() << "Python's safetensors package is not installed (" << python
                 << "): scripts/python-tools installs it";
  }
  const std::string script = R"(
import sys
import numpy as np
from safetensors.numpy import load_file
ours, hf = load_file(sys.argv[1]), load_file(sys.argv[2])
print("lm_head", "lm_head.weight" in hf)
print("c_attn", tuple(hf["transformer.h.0.attn.c_attn.weight"].shape))
print("same", all([
    np.array_equal(hf["transformer.wte.weight"], ours["embedding.wte"]),
    np.array_equal(hf["transformer.h.1.attn.c_attn.weight"], ours["block.1.attn.qkv.weight"].T),
    np.array_equal(hf["transformer.h.0.mlp.c_fc.weight"], ours["block.0.mlp.fc.weight"].T),
    np.array_equal(hf["transformer.h.0.mlp.c_proj.weight"], ours["block.0.mlp.proj.weight"].T),
    np.array_equal(hf["transformer.h.1.attn.c_attn.bias"], ours["block.1.attn.qkv.bias"]),
    np.array_equal(hf["transformer.ln_f.weight"], ours["head.ln_f.weight"])]))
)";
  const ProgramResult read = testing::run_program(
      {python, "-c", script, ours.string(), hf.string()}, out.path(), "python");
  ASSERT_EQ(read.exit_code, 0) << read.output();
  EXPECT_NE(read.out.find("lm_head False"), std::string::npos) << read.out;
  EXPECT_NE(read.out.find("c_attn (64, 192)"), std::string::npos) << read.out;
  EXPECT_NE(read.out.find("same True"), std::string::npos) << read.out;
}

// --dtype fp16: F16 tensors, each the master rounded to nearest even, under our names and
// under Hugging Face's (whose config.json says float16).
TEST_F(SavedCheckpoint, ExportAsFp16WritesEachMasterRoundedToF16) {
  const TempDir out;
  const fs::path ours = out / "ours.safetensors";
  const fs::path hf = out / "hf/model.safetensors";
  fs::create_directories(out / "hf");
  const ProgramResult e = testing::zerotrain(
      *dir_, {"checkpoint", "export", checkpoint().string(), ours.string(), "--dtype", "fp16"},
      "export-fp16");
  ASSERT_EQ(e.exit_code, 0) << e.output();
  EXPECT_NE(e.out.find("parameters in fp16"), std::string::npos) << e.out;
  const ProgramResult e_hf = testing::zerotrain(
      *dir_,
      {"checkpoint", "export", checkpoint().string(), hf.string(), "--dtype=fp16", "--names", "hf"},
      "export-fp16-hf");
  ASSERT_EQ(e_hf.exit_code, 0) << e_hf.output();

  const checkpoint::CheckpointReader reader(checkpoint());
  std::int64_t elements = 0;
  for (const auto& p : reader.manifest().parameters) {
    if (p.tied_to.empty()) elements += p.numel();
  }
  std::vector<float> all(static_cast<std::size_t>(elements));
  reader.read(0, 0, elements, all.data());
  const Safetensors s16 = read_safetensors(ours);
  EXPECT_NE(s16.header.find("\"embedding.wte\":{\"dtype\":\"F16\""), std::string::npos)
      << s16.header;
  EXPECT_EQ(s16.header.find("BF16"), std::string::npos) << s16.header;
  ASSERT_EQ(s16.data.size(), all.size() * 2);
  for (std::size_t i = 0; i < all.size(); ++i) {
    std::uint16_t bits = 0;
    std::memcpy(&bits, s16.data.data() + 2 * i, 2);
    ASSERT_EQ(bits, f32_to_f16_bits(all[i])) << "element " << i;
  }
  const Safetensors s16_hf = read_safetensors(hf);
  EXPECT_NE(s16_hf.header.find("\"transformer.wte.weight\":{\"dtype\":\"F16\""), std::string::npos)
      << s16_hf.header;
  const std::string config_json = testing::read_text(out / "hf/config.json");
  EXPECT_NE(config_json.find("\"torch_dtype\": \"float16\""), std::string::npos) << config_json;
}

TEST_F(SavedCheckpoint, ExportNeverWritesThroughASymlinkOrOverADirectory) {
  const TempDir out;
  const fs::path target = out / "precious.bin";
  std::ofstream(target) << "keep me";
  fs::create_symlink(target, out / "link.safetensors");
  const ProgramResult link = testing::zerotrain(
      *dir_, {"checkpoint", "export", checkpoint().string(), (out / "link.safetensors").string()},
      "link");
  EXPECT_EQ(link.exit_code, 1) << link.output();
  EXPECT_NE(link.err.find("symbolic link"), std::string::npos) << link.err;
  EXPECT_EQ(testing::read_text(target), "keep me");
  const ProgramResult directory = testing::zerotrain(
      *dir_, {"checkpoint", "export", checkpoint().string(), out.path().string()}, "directory");
  EXPECT_EQ(directory.exit_code, 1) << directory.output();
  const ProgramResult missing =
      testing::zerotrain(*dir_, {"checkpoint", "inspect", (out / "nothing").string()}, "missing");
  EXPECT_EQ(missing.exit_code, 1) << missing.output();
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
  const ProgramResult usage =
      testing::zerotrain(*dir_, {"checkpoint", "export", checkpoint().string()}, "usage");
  EXPECT_EQ(usage.exit_code, 2) << usage.output();
}

// The names in `dir`, sorted: a temp file left behind would show here.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Exporting into the folder a fine-tune started from (its model.safetensors and config.json)
// must not destroy it: every file the export would write is refused when it exists, unless
// --overwrite, and --overwrite replaces them only with complete files.
TEST_F(SavedCheckpoint, ExportRefusesAnExistingOutOrConfigJsonUnlessOverwrite) {
  const TempDir out;
  const fs::path weights = out / "model.safetensors";
  const fs::path config = out / "config.json";
  const std::string earlier_weights = "earlier weights, kept byte for byte";
  const std::string earlier_config = "{\"earlier\": true}\n";
  std::ofstream(weights, std::ios::binary) << earlier_weights;
  std::ofstream(config, std::ios::binary) << earlier_config;
  const auto export_to = [&](const fs::path& from, const fs::path& to,
                             std::vector<std::string> more, const std::string& name) {
    std::vector<std::string> args{"checkpoint", "export", from.string(), to.string()};
    args.insert(args.end(), more.begin(), more.end());
    return testing::zerotrain(*dir_, args, name);
  };
  const auto expect_earlier_files = [&](const std::string& after) {
    // EXPECT_TRUE: a replaced model.safetensors is binary, not worth printing.
    EXPECT_TRUE(testing::read_text(weights) == earlier_weights)
        << "model.safetensors was replaced: " << after;
    EXPECT_EQ(testing::read_text(config), earlier_config) << after;
    EXPECT_EQ(names_in(out.path()), (std::vector<std::string>{"config.json", "model.safetensors"}))
        << after;
  };

  for (const char* names : {"hf", "zerotrain"}) {
    const ProgramResult refused =
        export_to(checkpoint(), weights, {"--names", names}, std::string("refused-") + names);
    EXPECT_EQ(refused.exit_code, 1) << refused.output();
    EXPECT_NE(refused.err.find("already exists"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("pass --overwrite to replace it, or choose another output path"),
              std::string::npos)
        << refused.err;
    expect_earlier_files(std::string("--names ") + names);
  }
  // OUT itself is new, but the config.json beside it is not: refused, and OUT not written.
  const fs::path fresh = out / "fresh.safetensors";
  const ProgramResult beside = export_to(checkpoint(), fresh, {"--names", "hf"}, "beside");
  EXPECT_EQ(beside.exit_code, 1) << beside.output();
  EXPECT_NE(beside.err.find("'" + config.string() + "': it already exists"), std::string::npos)
      << beside.err;
  expect_earlier_files("a new OUT beside an existing config.json");

  // --overwrite, but the checkpoint turns out damaged part way: both earlier files stay.
  const TempDir copy;
  fs::copy(checkpoint(), copy / "step-00000006", fs::copy_options::recursive);
  const fs::path shard = copy / "step-00000006/rank-00001-of-00002.zts";
  std::string bytes = testing::read_text(shard);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 1);
  std::ofstream(shard, std::ios::binary | std::ios::trunc) << bytes;
  const ProgramResult damaged =
      export_to(copy / "step-00000006", weights, {"--names", "hf", "--overwrite"}, "damaged");
  EXPECT_EQ(damaged.exit_code, 1) << damaged.output();
  EXPECT_NE(damaged.err.find("is corrupt"), std::string::npos) << damaged.err;
  expect_earlier_files("a failed --overwrite");

  const ProgramResult replaced =
      export_to(checkpoint(), weights, {"--names", "hf", "--overwrite"}, "replaced");
  ASSERT_EQ(replaced.exit_code, 0) << replaced.output();
  EXPECT_NE(read_safetensors(weights).header.find("transformer.wte.weight"), std::string::npos);
  EXPECT_NE(testing::read_text(config).find("\"model_type\""), std::string::npos);
  EXPECT_EQ(names_in(out.path()), (std::vector<std::string>{"config.json", "model.safetensors"}));

  // --overwrite never replaces a link.
  fs::create_symlink(weights, out / "link.safetensors");
  const std::string exported = testing::read_text(weights);
  const ProgramResult link =
      export_to(checkpoint(), out / "link.safetensors", {"--overwrite"}, "link-overwrite");
  EXPECT_EQ(link.exit_code, 1) << link.output();
  EXPECT_NE(link.err.find("symbolic link"), std::string::npos) << link.err;
  EXPECT_TRUE(testing::read_text(weights) == exported) << "the link's target changed";
}

TEST_F(SavedCheckpoint, ExportNeverWritesInsideTheCheckpointItReads) {
  const std::map<std::string, std::string> before = contents(checkpoint());
  const TempDir out;
  fs::create_directory_symlink(checkpoint(), out / "into");
  fs::create_symlink(checkpoint() / "manifest.toml", out / "manifest-link.safetensors");
  fs::create_symlink(checkpoint() / "new.safetensors", out / "dangling.safetensors");
  const std::vector<fs::path> inside{checkpoint() / "manifest.toml",
                                     checkpoint() / "weights.safetensors",
                                     checkpoint() / ".." / checkpoint().filename() / "x",
                                     out / "into" / "manifest.toml",
                                     out / "manifest-link.safetensors",
                                     out / "dangling.safetensors"};
  int n = 0;
  for (const fs::path& target : inside) {
    const ProgramResult run =
        testing::zerotrain(*dir_, {"checkpoint", "export", checkpoint().string(), target.string()},
                           "inside-" + std::to_string(n++));
    EXPECT_EQ(run.exit_code, 1) << run.output();
    EXPECT_NE(run.err.find("'" + target.string() + "'"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("inside the checkpoint '" + checkpoint().string() + "'"),
              std::string::npos)
        << run.err;
  }
  EXPECT_EQ(contents(checkpoint()), before);
}

}  // namespace
}  // namespace zt
