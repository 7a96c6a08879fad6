// `zerotrain generate` as a user runs it, from a checkpoint of the tiny GPT trained by
// `zerotrain launch` on 2 ranks at ZeRO stage 3: the same seed gives the same text, another
// seed other text, greedy decoding through the KV cache equals an argmax over full forwards,
// a byte-level BPE tokenizer encodes the prompt and decodes the output, and each bad input
// exits non-zero naming what is wrong.
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
#include "runtime/engine/model_factory.h"
#include "runtime/generate/decoder.h"
#include "runtime/generate/model_weights.h"
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
       {"saved from another model", "tiny.toml"}},
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

}  // namespace
}  // namespace zt
