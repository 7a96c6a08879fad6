// Engine::generate at one rank, through <zerotrain/...> alone: the config's GPT built without
// its data (EngineOptions::load_data off) continues a batch of prompts, each row what its
// prompt gives alone (greedy; sampled, the first row's stream is the one a prompt alone
// draws from); ids outside the data's vocabulary and a model that is not a language model
// are refused by name.
#include <gtest/gtest.h>
#include <zerotrain/zerotrain.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

using Rows = std::vector<std::vector<std::int32_t>>;

constexpr std::int64_t kVocab = 24;

// A tiny GPT that pads its vocabulary past the data's (ids 20..23 are never real tokens).
zerotrain::Config gpt_config() {
  return zerotrain::parse_config(
      "",
      {"model.type=gpt", "model.n_layer=2", "model.n_head=2", "model.d_model=16",
       "model.vocab_size=" + std::to_string(kVocab), "model.data_vocab_size=20", "model.seq_len=16",
       "train.micro_batch_size=2", "train.steps=1", "data.path=/nonexistent/tokens.bin"},
      "engine_generate_test.toml");
}

zerotrain::EngineOptions generate_only() {
  zerotrain::EngineOptions options;
  options.write_run_dir = false;
  options.show_progress = false;
  options.load_data = false;  // data.path names no file: it must not be opened
  return options;
}

std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(EngineGenerate, EachRowOfABatchIsWhatItsPromptGivesAlone) {
  zerotrain::Engine engine(gpt_config(), generate_only());
  const Rows prompts = {{1, 2, 3}, {7}, {4, 5, 6, 7, 8}};
  const zerotrain::SamplingOptions greedy{.temperature = 0.0, .top_k = 0, .seed = 0};
  const Rows batch = engine.generate(prompts, 6, greedy);
  ASSERT_EQ(batch.size(), prompts.size());
  for (std::size_t b = 0; b < prompts.size(); ++b) {
    ASSERT_EQ(batch[b].size(), 6u);
    for (const std::int32_t id : batch[b]) EXPECT_TRUE(id >= 0 && id < 20) << id;
    EXPECT_EQ(engine.generate({prompts[b]}, 6, greedy).front(), batch[b]) << "prompt " << b;
  }

  const zerotrain::SamplingOptions sampled{.temperature = 2.0, .top_k = 0, .seed = 9};
  const Rows drawn = engine.generate(prompts, 6, sampled);
  EXPECT_EQ(engine.generate(prompts, 6, sampled), drawn);  // a seed repeats its draws
  EXPECT_EQ(engine.generate({prompts[0]}, 6, sampled).front(), drawn[0]);
  // Row 1 draws from its own stream: changing row 2's prompt leaves it as it was.
  EXPECT_EQ(engine.generate({prompts[0], prompts[1], {3, 3}}, 6, sampled)[1], drawn[1]);
  for (const auto& row : drawn) {
    for (const std::int32_t id : row) EXPECT_TRUE(id >= 0 && id < 20) << id;
  }
  engine.finish();
}

TEST(EngineGenerate, BadPromptsAreRefusedByName) {
  zerotrain::Engine engine(gpt_config(), generate_only());
  const zerotrain::SamplingOptions greedy{.temperature = 0.0, .top_k = 0, .seed = 0};
  EXPECT_NE(error_of([&] {
              engine.generate({{1, 20}}, 2, greedy);
            })
                .find("prompt 0 position 1 holds token id 20, outside the data's vocabulary "
                      "[0, 20)"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              engine.generate({{1}, {}}, 2, greedy);
            }).find("prompt 1"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              engine.generate({{1, 2, 3}}, 14, greedy);
            }).find("model.seq_len"),
            std::string::npos);
  engine.finish();
}

TEST(EngineGenerate, AModelThatIsNotALanguageModelIsRefused) {
  zerotrain::nn::Model model("regression");
  model.add_block("head", std::make_unique<zerotrain::nn::Linear>("head", 4, 1, true));
  zerotrain::EngineOptions options = generate_only();
  zerotrain::Engine engine(zerotrain::parse_config("", {"train.micro_batch_size=2"}, "mlp.toml"),
                           std::move(model), nullptr, nullptr, options);
  EXPECT_NE(error_of([&] {
              engine.generate({{1}}, 1, {.temperature = 0.0, .top_k = 0, .seed = 0});
            }).find("generate needs a language model"),
            std::string::npos);
  engine.finish();
}

}  // namespace
