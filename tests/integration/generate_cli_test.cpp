// `zerotrain generate` as a user runs it, from a checkpoint of the tiny GPT trained by
// `zerotrain launch` on 2 ranks at ZeRO stage 3: the same seed gives the same text, another
// seed other text, greedy decoding equals an argmax over full forwards, a byte-level BPE
// tokenizer encodes the prompt and decodes the output, the model comes from the checkpoint's
// manifest or a Hugging Face folder without a CONFIG, a batch of prompts prints one block per
// prompt whatever the world size and stage, and each bad input exits non-zero naming what is
// wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/config/config_loader.h"
#include "core/device/device_context.h"
#include "data/byte_level_alphabet.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/checkpoint/checkpoint_format.h"
#include "runtime/checkpoint/checkpoint_reader.h"
#include "runtime/checkpoint/hf_model_settings.h"
#include "runtime/checkpoint/hf_weights.h"
#include "runtime/engine/model_factory.h"
#include "runtime/generate/decoder.h"
#include "runtime/generate/model_weights.h"
#include "sharding/flat_layout.h"
#include "support/hf_llama_fixture.h"
#include "support/zerotrain_cli.h"

namespace zt {
namespace {

namespace fs = std::filesystem;
using testing::ProgramResult;
using testing::TempDir;

constexpr int kSteps = 20;
// The tiny config with a byte-sized vocabulary, so that a byte-level tokenizer fits it.
const std::vector<std::string> kModel = {"--set", "model.vocab_size=256"};

// One checkpoint for every test: training takes a few seconds, generating a fraction of one.
class GenerateCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    std::vector<std::string> args = {"launch", "--nproc-per-node",
                                     "2",      testing::config_path("tiny.toml"),
                                     "--set",  "train.steps=" + std::to_string(kSteps),
                                     "--set",  "zero.stage=3",
                                     "--set",  "checkpoint.every_steps=" + std::to_string(kSteps),
                                     "--set",  "run.dir=" + (dir_->path() / "run").string(),
                                     "--set",  "runtime.comm_timeout_s=30"};
    args.insert(args.end(), kModel.begin(), kModel.end());
    const ProgramResult run = testing::zerotrain(*dir_, args, "train");
    ASSERT_EQ(run.exit_code, 0) << run.output();
    checkpoint_ = dir_->path() / "run" / "checkpoints" / checkpoint::step_directory_name(kSteps);
    ASSERT_TRUE(fs::exists(checkpoint_ / "manifest.toml")) << run.output();
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  // `zerotrain generate tiny.toml --checkpoint <the checkpoint> ARGS...` (the model keys
  // first, so ARGS may override them).
  static ProgramResult generate(const std::vector<std::string>& args,
                                const std::string& name = "generate") {
    std::vector<std::string> all = {"generate", testing::config_path("tiny.toml"), "--checkpoint",
                                    checkpoint_.string()};
    all.insert(all.end(), kModel.begin(), kModel.end());
    all.insert(all.end(), args.begin(), args.end());
    return testing::zerotrain(*dir_, all, name);
  }

  // `zerotrain generate ARGS...` with nothing added, under `zerotrain launch --nproc-per-node
  // ranks --` when `ranks` > 1.
  static ProgramResult generate_on(int ranks, const std::vector<std::string>& args,
                                   const std::string& name) {
    std::vector<std::string> all;
    if (ranks > 1) {
      all = {"launch", "--nproc-per-node", std::to_string(ranks), "--",
             testing::zerotrain_binary()};
    }
    all.push_back("generate");
    all.insert(all.end(), args.begin(), args.end());
    if (ranks > 1) all.insert(all.end(), {"--set", "runtime.comm_timeout_s=30"});
    return testing::zerotrain(*dir_, all, name);
  }

  static TempDir* dir_;
  static fs::path checkpoint_;
};

TempDir* GenerateCli::dir_ = nullptr;
fs::path GenerateCli::checkpoint_;

std::vector<std::int32_t> ids_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::int32_t> ids;
  for (std::int32_t id = 0; in >> id;) ids.push_back(id);
  return ids;
}

TEST_F(GenerateCli, TheSameSeedGivesTheSameTextAndAnotherSeedOther) {
  const std::vector<std::string> sampling = {"--prompt", "1 2 3",         "--max-new-tokens",
                                             "24",       "--temperature", "1"};
  const auto with_seed = [&](const std::string& seed) {
    std::vector<std::string> args = sampling;
    args.insert(args.end(), {"--seed", seed});
    const ProgramResult run = generate(args, "seed-" + seed);
    EXPECT_EQ(run.exit_code, 0) << run.output();
    return run.out;
  };
  const std::string first = with_seed("7");
  EXPECT_EQ(ids_of(first).size(), 27u) << first;
  EXPECT_EQ(first.rfind("1 2 3 ", 0), 0u) << "the prompt comes first: " << first;
  EXPECT_EQ(with_seed("7"), first);
  EXPECT_NE(with_seed("8"), first);
}

TEST_F(GenerateCli, GreedyEqualsAnArgmaxOverFullForwards) {
  const ProgramResult run =
      generate({"--prompt", "5 9", "--max-new-tokens", "16", "--temperature", "0"});
  ASSERT_EQ(run.exit_code, 0) << run.output();
  const std::vector<std::int32_t> printed = ids_of(run.out);

  // The same decoding without a cache: every next token from a forward over all before it.
  nn::cpu::set_blas_threads(1);
  const Config config =
      load_config_file(testing::config_path("tiny.toml"), {"model.vocab_size=256"});
  const std::unique_ptr<DeviceContext> device = make_cpu_device_context();
  nn::Model model = engine::make_model(config);
  const checkpoint::CheckpointReader reader(checkpoint_);
  const generate::ModelWeights weights =
      generate::ModelWeights::from_checkpoint(model, reader, DType::kF32, *device, "tiny.toml");
  generate::Decoder decoder(model, weights, *device, config.model.seq_len);
  std::vector<std::int32_t> expected = {5, 9};
  while (expected.size() < 18) {
    const std::vector<float> logits = decoder.full_forward(expected);
    const auto best = std::max_element(logits.begin(), logits.end()) - logits.begin();
    expected.push_back(static_cast<std::int32_t>(best));
  }
  EXPECT_EQ(printed, expected) << run.output();
  // A trained model predicts, not one token forever: the Markov corpus's chains move on.
  EXPECT_GT(std::set<std::int32_t>(expected.begin() + 2, expected.end()).size(), 1u);
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// A byte-level BPE tokenizer.json without merges: byte b is token b.
std::string byte_tokenizer_json(const std::string& model_type) {
  std::string vocab;
  for (unsigned b = 0; b < 256; ++b) {
    std::string symbol = data::byte_level_symbol(static_cast<unsigned char>(b));
    if (symbol == "\"" || symbol == "\\") symbol = "\\" + symbol;
    vocab += (b ? ", \"" : "\"") + symbol + "\": " + std::to_string(b);
  }
  return R"({"version": "1.0", "added_tokens": [], "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}, "decoder": {"type": "ByteLevel"},
  "model": {"type": ")" +
         model_type + R"(", "vocab": {)" + vocab + R"(}, "merges": []}})";
}

TEST_F(GenerateCli, ATokenizerEncodesThePromptAndDecodesTheOutput) {
  write_text(dir_->path() / "bytes.json", byte_tokenizer_json("BPE"));
  const ProgramResult run =
      generate({"--set", "data.tokenizer=" + (dir_->path() / "bytes.json").string(), "--prompt",
                "Hi there", "--max-new-tokens", "8", "--temperature", "0"});
  ASSERT_EQ(run.exit_code, 0) << run.output();
  // 8 prompt bytes (8 tokens), 8 new tokens of one byte each, and the newline.
  EXPECT_EQ(run.out.rfind("Hi there", 0), 0u) << run.out;
  EXPECT_EQ(run.out.size(), 8u + 8u + 1u) << run.out;
}

// Each mistake exits with `code` and a message holding every one of `named`.
struct BadInput {
  const char* what;
  std::vector<std::string> args;
  int code;
  std::vector<std::string> named;
};

TEST_F(GenerateCli, EachBadInputExitsNonZeroNamingIt) {
  write_text(dir_->path() / "wordpiece.json", byte_tokenizer_json("WordPiece"));
  const std::string wordpiece = "data.tokenizer=" + (dir_->path() / "wordpiece.json").string();
  const fs::path empty = dir_->path() / "empty.txt";
  write_text(empty, "\n\n");
  const fs::path bad_line = dir_->path() / "bad_line.txt";
  write_text(bad_line, "1 2\n\n3 999\n");
  const std::vector<BadInput> cases = {
      {"empty prompt", {"--prompt", " ", "--max-new-tokens", "4"}, 2, {"--prompt", "no tokens"}},
      {"past seq_len",
       {"--prompt", "1 2 3", "--max-new-tokens", "30"},
       2,
       {"--prompt (3 tokens)", "--max-new-tokens 30", "model.seq_len = 32"}},
      {"id outside the vocabulary",
       {"--prompt", "1 256", "--max-new-tokens", "4"},
       2,
       {"--prompt", "256", "model.vocab_size"}},
      {"missing checkpoint",
       {"--prompt", "1", "--max-new-tokens", "4", "--checkpoint",
        (dir_->path() / "nowhere").string()},
       1,
       {"nowhere"}},
      {"another model",
       {"--prompt", "1", "--max-new-tokens", "4", "--set", "model.d_model=32"},
       1,
       {"saved from another model", "manifest.toml"}},
      {"negative temperature",
       {"--prompt", "1", "--max-new-tokens", "4", "--temperature", "-1"},
       2,
       {"--temperature", "-1"}},
      {"temperature not a number",
       {"--prompt", "1", "--max-new-tokens", "4", "--temperature", "hot"},
       2,
       {"--temperature", "hot"}},
      {"negative top-k",
       {"--prompt", "1", "--max-new-tokens", "4", "--top-k", "-2"},
       2,
       {"--top-k", "-2"}},
      {"no max-new-tokens", {"--prompt", "1"}, 2, {"--max-new-tokens"}},
      {"tokenizer not BPE",
       {"--set", wordpiece, "--prompt", "hi", "--max-new-tokens", "4"},
       1,
       {"wordpiece.json", "WordPiece"}},
      {"no prompt", {"--max-new-tokens", "4"}, 2, {"--prompt TEXT", "--prompts-file FILE"}},
      {"an empty prompts file",
       {"--prompts-file", empty.string(), "--max-new-tokens", "4"},
       2,
       {"empty.txt", "holds no prompt"}},
      {"a prompts file that is a directory",
       {"--prompts-file", dir_->path().string(), "--max-new-tokens", "4"},
       1,
       {dir_->path().string(), "prompts file"}},
      {"a prompts file that is a device",
       {"--prompts-file", "/dev/zero", "--max-new-tokens", "4"},
       1,
       {"/dev/zero", "prompts file"}},
      {"a prompt and a prompts file",
       {"--prompt", "1", "--prompts-file", empty.string(), "--max-new-tokens", "4"},
       2,
       {"--prompt", "--prompts-file", "not both"}},
      {"a bad id on a prompts file's line",
       {"--prompts-file", bad_line.string(), "--max-new-tokens", "4"},
       2,
       {"bad_line.txt:3", "token id 999"}},
      {"the longer prompt of a batch past seq_len",
       {"--prompt", "1", "--prompt", "1 2 3 4 5", "--max-new-tokens", "28"},
       2,
       {"--prompt 2 (5 tokens)", "model.seq_len = 32"}},
  };
  int k = 0;
  for (const BadInput& c : cases) {
    const ProgramResult run = generate(c.args, "bad-" + std::to_string(k++));
    EXPECT_EQ(run.exit_code, c.code) << c.what << "\n" << run.output();
    EXPECT_EQ(run.out, "") << c.what;
    for (const std::string& name : c.named) {
      EXPECT_NE(run.err.find(name), std::string::npos)
          << c.what << ": the message names '" << name << "'\n"
          << run.err;
    }
  }
}

// Rank 0's stdout under launch without the "[rank 0] " its lines are relayed with.
std::string without_rank_prefix(const std::string& out) {
  const std::string prefix = "[rank 0] ";
  std::string text;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) == 0) line.erase(0, prefix.size());
    text += line + "\n";
  }
  return text;
}

// The blocks of generate's output: one per prompt, a blank line between them.
std::vector<std::string> blocks_of(const std::string& out) {
  std::vector<std::string> blocks;
  std::size_t begin = 0;
  while (begin < out.size()) {
    std::size_t end = out.find("\n\n", begin);
    if (end == std::string::npos) end = out.size();
    blocks.push_back(out.substr(begin, end - begin + 1));  // with its newline
    begin = end + 2;
  }
  return blocks;
}

// Without CONFIG the model is the one the checkpoint's manifest saved: the same text as with
// the training CONFIG, greedy and sampled.
TEST_F(GenerateCli, WithoutAConfigTheCheckpointsManifestGivesTheSameText) {
  for (const char* temperature : {"0", "1"}) {
    const std::vector<std::string> args = {"--prompt",      "5 9",       "--max-new-tokens", "12",
                                           "--temperature", temperature, "--seed",           "3"};
    const ProgramResult with_config = generate(args, std::string("with-config-") + temperature);
    ASSERT_EQ(with_config.exit_code, 0) << with_config.output();
    std::vector<std::string> bare = {"--checkpoint", checkpoint_.string()};
    bare.insert(bare.end(), args.begin(), args.end());
    const ProgramResult without = generate_on(1, bare, std::string("no-config-") + temperature);
    ASSERT_EQ(without.exit_code, 0) << without.output();
    EXPECT_EQ(without.out, with_config.out) << "temperature " << temperature;
    EXPECT_EQ(ids_of(without.out).size(), 14u) << without.out;
  }
}

// A Hugging Face folder without CONFIG: model.* from its config.json, its weights through
// checkpoint.init_from; greedy tokens equal generate::Decoder's over the fixture's weights.
TEST_F(GenerateCli, AHuggingFaceFolderGeneratesWithoutAConfig) {
  const fs::path folder = testing::hf_llama_fixture();
  const ProgramResult run = generate_on(1,
                                        {"--checkpoint", folder.string(), "--prompt", "3 1 4 1 5",
                                         "--max-new-tokens", "10", "--temperature", "0"},
                                        "hf-folder");
  ASSERT_EQ(run.exit_code, 0) << run.output();
  const std::vector<std::int32_t> printed = ids_of(run.out);

  nn::cpu::set_blas_threads(1);
  const Config config =
      parse_config_text("", "config.json", checkpoint::hf_model_settings(folder / "config.json"));
  const std::unique_ptr<DeviceContext> device = make_cpu_device_context();
  nn::Model model = engine::make_model(config);
  const zero::FlatLayout layout = zero::make_flat_layout(model, 1);
  const std::vector<float> full = testing::expected_from_hf_llama(
      checkpoint::HfWeights(folder), checkpoint::describe_parameters(layout), layout.numel);
  const generate::ModelWeights weights(model, full, DType::kF32, *device);
  generate::Decoder decoder(model, weights, *device, config.model.seq_len);
  std::vector<std::int32_t> expected = {3, 1, 4, 1, 5};
  std::vector<float> logits = decoder.feed(expected);
  while (expected.size() < 15) {
    const auto best = std::max_element(logits.begin(), logits.begin() + 32) - logits.begin();
    expected.push_back(static_cast<std::int32_t>(best));
    logits = decoder.feed(std::span(&expected.back(), 1));
  }
  EXPECT_EQ(printed, expected) << run.output();
}

// A batch of 3 prompts of different lengths: 2 ranks at ZeRO stage 3 print exactly what 1
// rank prints, greedy and sampled; greedily each block is the prompt generated alone; sampled,
// a row's text does not change with another row's prompt (Note [A stream per row]), and the
// first row draws what its prompt alone draws. --prompts-file gives the same batch.
TEST_F(GenerateCli, ABatchPrintsOneBlockPerPromptAtAnyWorldSize) {
  const std::vector<std::string> prompts = {"1 2 3", "5", "7 8 9 10 11"};
  const auto run = [&](int ranks, const std::vector<std::string>& batch,
                       const std::string& temperature, const std::string& name) {
    std::vector<std::string> args = {
        "--checkpoint",  checkpoint_.string(), "--max-new-tokens", "10",
        "--temperature", temperature,          "--seed",           "5",
        "--set",         "zero.stage=3"};
    for (const std::string& prompt : batch) args.insert(args.end(), {"--prompt", prompt});
    const ProgramResult result = generate_on(ranks, args, name);
    EXPECT_EQ(result.exit_code, 0) << result.output();
    return ranks > 1 ? without_rank_prefix(result.out) : result.out;
  };
  for (const std::string temperature : {"0", "1"}) {
    const std::string one = run(1, prompts, temperature, "batch1-" + temperature);
    const std::vector<std::string> blocks = blocks_of(one);
    ASSERT_EQ(blocks.size(), 3u) << one;
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      EXPECT_EQ(blocks[b].rfind(prompts[b] + " ", 0), 0u) << blocks[b];
      EXPECT_EQ(ids_of(blocks[b]).size(), ids_of(prompts[b]).size() + 10) << blocks[b];
    }
    EXPECT_EQ(run(2, prompts, temperature, "batch2-" + temperature), one);
    if (temperature == "0") {
      for (std::size_t b = 0; b < prompts.size(); ++b) {
        EXPECT_EQ(run(1, {prompts[b]}, temperature, "alone-" + std::to_string(b)), blocks[b]);
      }
    } else {
      EXPECT_EQ(run(1, {prompts[0]}, temperature, "alone-sampled"), blocks[0]);
      const std::string changed =
          run(1, {prompts[0], prompts[1], "4 4 4 4 4 4"}, temperature, "changed-sampled");
      const std::vector<std::string> changed_blocks = blocks_of(changed);
      ASSERT_EQ(changed_blocks.size(), 3u) << changed;
      EXPECT_EQ(changed_blocks[0], blocks[0]);
      EXPECT_EQ(changed_blocks[1], blocks[1]);
    }
  }

  write_text(dir_->path() / "prompts.txt", "1 2 3\r\n5\n\n7 8 9 10 11");
  const ProgramResult from_file = generate_on(
      1,
      {"--checkpoint", checkpoint_.string(), "--prompts-file",
       (dir_->path() / "prompts.txt").string(), "--max-new-tokens", "10", "--temperature", "0"},
      "prompts-file");
  ASSERT_EQ(from_file.exit_code, 0) << from_file.output();
  EXPECT_EQ(from_file.out, run(1, prompts, "0", "batch-again"));
}

}  // namespace
}  // namespace zt
