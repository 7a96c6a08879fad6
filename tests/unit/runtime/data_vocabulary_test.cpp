// The data's vocabulary (runtime/engine/data_vocabulary.h): model.data_vocab_size when set,
// else data.tokenizer's or checkpoint.init_from's config.json's when model.vocab_size pads past
// it, else model.vocab_size; a model.data_vocab_size past model.vocab_size refused by name.
#include "runtime/engine/data_vocabulary.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/config/config_loader.h"
#include "core/error.h"
#include "data/byte_level_alphabet.h"
#include "support/hf_reference_fixture.h"
#include "support/temp_dir.h"

namespace zt::engine {
namespace {

Config gpt_config(std::vector<std::string> extra) {
  std::vector<std::string> overrides{"model.type=gpt", "model.vocab_size=320"};
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "vocab_test.toml", overrides);
}

// A tokenizer.json of the 256 byte tokens.
std::string byte_tokenizer_json() {
  std::string vocab;
  for (unsigned b = 0; b < 256; ++b) {
    std::string symbol = data::byte_level_symbol(static_cast<unsigned char>(b));
    if (symbol == "\"" || symbol == "\\") symbol = "\\" + symbol;
    vocab += (b ? ", \"" : "\"") + symbol + "\": " + std::to_string(b);
  }
  return R"({"version": "1.0", "added_tokens": [], "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}, "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "vocab": {)" +
         vocab + R"(}, "merges": []}})";
}

TEST(DataVocabulary, IsModelVocabSizeWhenNothingRecordsAnother) {
  EXPECT_EQ(data_vocab_size(gpt_config({})), 320);
  EXPECT_EQ(with_data_vocab_size(gpt_config({})).model.data_vocab_size, 320);
}

TEST(DataVocabulary, ModelDataVocabSizeWinsAndMayNotExceedTheModels) {
  EXPECT_EQ(data_vocab_size(gpt_config({"model.data_vocab_size=300"})), 300);
  try {
    data_vocab_size(gpt_config({"model.data_vocab_size=321"}));
    ADD_FAILURE() << "accepted a data vocabulary past the model's";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("model.data_vocab_size = 321 is more than model.vocab_size = 320"),
              std::string::npos)
        << message;
  }
}

TEST(DataVocabulary, ComesFromTheTokenizerWhenTheModelIsPaddedPastIt) {
  testing::TempDir dir;
  std::ofstream(dir / "tokenizer.json") << byte_tokenizer_json();
  const std::string tokenizer = "data.tokenizer=" + (dir / "tokenizer.json").string();
  EXPECT_EQ(data_vocab_size(gpt_config({tokenizer})), 256);
  EXPECT_EQ(data_vocab_size(gpt_config({tokenizer, "model.data_vocab_size=260"})), 260);
  // A tokenizer larger than the model is refused where it is used, not taken.
  EXPECT_EQ(data_vocab_size(gpt_config({tokenizer, "model.vocab_size=200"})), 200);
}

TEST(DataVocabulary, ComesFromInitFromsConfigJson) {
  // The GPT-2 reference fixture's config.json says vocab_size 64.
  const std::filesystem::path fixture = testing::hf_reference_fixture("gpt2");
  EXPECT_EQ(data_vocab_size(gpt_config({"checkpoint.init_from=" + fixture.string()})), 64);
  EXPECT_EQ(data_vocab_size(
                gpt_config({"checkpoint.init_from=" + (fixture / "model.safetensors").string()})),
            64);
  EXPECT_EQ(data_vocab_size(
                gpt_config({"checkpoint.init_from=" + fixture.string(), "model.vocab_size=64"})),
            64);
}

TEST(DataVocabulary, IsModelVocabSizeForTheMlp) {
  EXPECT_EQ(data_vocab_size(parse_config_text("", "mlp.toml", {"model.type=mlp"})), 64);
}

}  // namespace
}  // namespace zt::engine
