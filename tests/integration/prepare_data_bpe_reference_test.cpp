// prepare-data --tokenizer against the reference implementation: Hugging Face's tokenizers
// (Python, from scripts/python-tools) trains a small byte-level BPE here, on text in this
// file, and encodes texts of every kind (<|endoftext|> written in them too); zerotrain must
// write exactly the same ids after the <|endoftext|> each document starts with, from
// tokenizer.json and from vocab.json + merges.txt, and decode them back to the text.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "data/bpe_tokenizer.h"
#include "support/foreign_token_files.h"
#include "support/zerotrain_cli.h"

namespace zt {
namespace {

namespace fs = std::filesystem;
using testing::ProgramResult;
using testing::TempDir;

const char* const kCorpus = R"(It's a truth universally acknowledged that a tokenizer we'd
trust must agree with the reference, byte for byte. They've trained it, you'll test it, and
I'm sure the ids won't drift. The quick brown fox jumps over the lazy dog 1234567890 times.
Grüße aus Köln: naïve café, crème brûlée, Ελληνικά, русский текст, 東京タワー, 서울.
Numbers 3.14159, 2,718 and 1e-9; code: if (x != y) { return x + y; } // done!!
    Indented lines,		tabs, and trailing spaces   
Emoji too 😀 👍🏽 🇫🇷 — and punctuation… «quoted» “curly” ‘single’ (parens) [brackets].
)";

// The texts compared: ASCII, Unicode letters, digits and punctuation, whitespace runs
// (Unicode spaces too), contractions, emoji, and a long one that crosses prepare-data's
// 1 MiB read chunks.
std::vector<std::string> texts() {
  std::vector<std::string> all = {
      "Hello world! The quick brown fox jumps over the lazy dog.",
      "Grüße aus Köln — naïve café, 東京タワー 123 ١٢٣ ½ ³ «quoted» … ¿Qué? ¡Sí!",
      "a  b   c\t\td\n\n\ne    \n  f   \r\n g\u00a0h \u00a0 i\u3000j\u2028k  ",
      "I'm sure you'll see they've done it; it's what we'd do. DON'T 'tis 'S 're'll'd's",
      "Emoji 😀👍🏽 family 👨‍👩‍👧 flags 🇫🇷🇯🇵 ok 🙂🙂🙂!",
      "   leading spaces and a trailing newline\n",
      // Added tokens in the text are their ids (Note [Added tokens in text]).
      "<|endoftext|>A document.<|endoftext|><|endoftext|> Another, cut <|endoftext| short "
      "<|endoftext|>\n",
  };
  std::string long_text;
  while (long_text.size() < (std::size_t{3} << 19)) {  // 1.5 MiB
    for (const std::string& text : all) long_text += text + " " + kCorpus;
  }
  all.push_back(long_text);
  return all;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::vector<std::int32_t> read_ids(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::int32_t> ids;
  for (std::int32_t id = 0; in >> id;) ids.push_back(id);
  return ids;
}

std::string tools_python() {
  const fs::path venv = fs::path(testing::source_dir()) / "build/tools-python/bin/python3";
  return fs::exists(venv) ? venv.string() : "python3";
}

// Trains the tokenizer on corpus.txt, saves tokenizer.json, a copy with add_prefix_space,
// and vocab.json + merges.txt; writes the reference ids of text-K.txt to ids-K.txt (and
// ids-prefix-K.txt), checking that its own decode gives the text back.
const char* const kReferenceScript = R"(
import sys
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
count = int(sys.argv[1])
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=700, min_frequency=1, show_progress=False,
                              special_tokens=["<|endoftext|>"],
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
with open("corpus.txt", encoding="utf-8") as f:
    corpus = f.read().splitlines(keepends=True)
tok.train_from_iterator(corpus, trainer)
tok.save("tokenizer.json")
tok.model.save(".")
prefixed = Tokenizer.from_file("tokenizer.json")
prefixed.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
prefixed.save("tokenizer-prefix.json")
for k in range(count):
    with open(f"text-{k}.txt", encoding="utf-8", newline="") as f:
        text = f.read()
    for name, t in (("ids", tok), ("ids-prefix", prefixed)):
        ids = t.encode(text, add_special_tokens=False).ids
        if name == "ids":
            assert t.decode(ids, skip_special_tokens=False) == text, f"reference decode {k}"
        with open(f"{name}-{k}.txt", "w") as f:
            f.write(" ".join(map(str, ids)))
with open("eot.txt", "w") as f:
    f.write(str(tok.token_to_id("<|endoftext|>")))
print("vocab", tok.get_vocab_size())
)";

TEST(PrepareDataBpeReference, IdsMatchHuggingFaceTokenizers) {
  TempDir dir;
  const std::string python = tools_python();
  const ProgramResult probe =
      testing::run_program({python, "-c", "import tokenizers"}, dir.path(), "probe");
  if (probe.exit_code != 0) {
    GTEST_SKIP() << "Python's tokenizers package is not installed (" << python
                 << "): scripts/python-tools installs it; the unit tests in "
                    "tests/unit/data/bpe_tokenizer_test.cpp still ran";
  }
  const std::vector<std::string> all = texts();
  write_text(dir / "corpus.txt", kCorpus);
  for (std::size_t k = 0; k < all.size(); ++k) {
    write_text(dir / ("text-" + std::to_string(k) + ".txt"), all[k]);
  }
  const ProgramResult reference = testing::run_program(
      {python, "-c", kReferenceScript, std::to_string(all.size())}, dir.path(), "reference");
  ASSERT_EQ(reference.exit_code, 0) << reference.output();
  ASSERT_TRUE(fs::exists(dir / "vocab.json") && fs::exists(dir / "merges.txt"));

  data::BpeTokenizer tokenizer = data::BpeTokenizer::load(dir / "tokenizer.json");
  for (std::size_t k = 0; k < all.size(); ++k) {
    const std::string n = std::to_string(k);
    const std::vector<std::int32_t> expected = read_ids(dir / ("ids-" + n + ".txt"));
    ASSERT_FALSE(expected.empty()) << "text " << k;
    struct Variant {
      std::string name;
      std::vector<std::string> flags;
      std::string ids_file;
    };
    const std::vector<Variant> variants = {
        {"tokenizer.json", {"--tokenizer", "tokenizer.json"}, "ids-" + n + ".txt"},
        {"vocab.json + merges.txt", {"--tokenizer", "vocab.json"}, "ids-" + n + ".txt"},
        {"add_prefix_space", {"--tokenizer=tokenizer-prefix.json"}, "ids-prefix-" + n + ".txt"},
    };
    for (const Variant& variant : variants) {
      // One out.bin for every text and variant, replaced each time.
      std::vector<std::string> args = {"prepare-data", "text-" + n + ".txt", "out.bin",
                                       "--overwrite"};
      args.insert(args.end(), variant.flags.begin(), variant.flags.end());
      const ProgramResult run = testing::zerotrain(dir, args, "prepare-" + n);
      ASSERT_EQ(run.exit_code, 0) << variant.name << ", text " << k << "\n" << run.output();
      // prepare-data starts each document with <|endoftext|>, as llm.c's fineweb.py does.
      std::vector<std::int32_t> want = read_ids(dir / "eot.txt");
      ASSERT_EQ(want.size(), 1u);
      const std::vector<std::int32_t> ids = read_ids(dir / variant.ids_file);
      want.insert(want.end(), ids.begin(), ids.end());
      const std::vector<std::int32_t> got = testing::read_llmc_tokens(dir / "out.bin");
      ASSERT_EQ(got.size(), want.size()) << variant.name << ", text " << k;
      for (std::size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << variant.name << ", text " << k << ", token " << i;
      }
    }
    EXPECT_EQ(tokenizer.decode(expected), all[k]) << "decoding text " << k;
  }
}

}  // namespace
}  // namespace zt
