// `zerotrain prepare-data IN... OUT.bin` as llm.c and nanoGPT users prepare corpora: inputs
// (files and glob patterns, in sorted order) are documents, each written after the
// tokenizer's <|endoftext|>; --val-fraction writes the last documents, whole, to a
// validation file; and every usage error names the argument at fault.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "data/bpe_tokenizer.h"
#include "data/byte_level_alphabet.h"
#include "data/token_file.h"
#include "support/byte_level_tokenizer.h"
#include "support/foreign_token_files.h"
#include "support/zerotrain_cli.h"

namespace zt {
namespace {

namespace fs = std::filesystem;
using testing::ProgramResult;
using testing::TempDir;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// A byte-level BPE tokenizer.json: bytes 0..255, merges "a b" (256) and "Ġ t" (257), and
// the added token "<|endoftext|>" (258) unless `eot` is false.
std::string tokenizer_json(bool eot = true) {
  std::string vocab;
  for (unsigned b = 0; b < 256; ++b) {
    vocab += (b ? ", " : "") +
             testing::json_text(data::byte_level_symbol(static_cast<unsigned char>(b))) + ": " +
             std::to_string(b);
  }
  vocab += R"(, "ab": 256, "Ġt": 257)";
  const std::string added =
      eot ? R"([{"id": 258, "content": "<|endoftext|>", "special": true}])" : "[]";
  return R"({"version": "1.0", "added_tokens": )" + added +
         R"(, "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}, "decoder": null,
  "model": {"type": "BPE", "vocab": {)" +
         vocab + R"(}, "merges": ["a b", "Ġ t"]}})";
}

std::vector<std::int32_t> read_zerotrain_tokens(const fs::path& path) {
  const data::TokenFile file = data::TokenFile::open(path);
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(file.size()));
  file.read(0, tokens);
  return tokens;
}

class PrepareDataDocuments : public ::testing::Test {
 protected:
  PrepareDataDocuments() {
    write_text(dir_ / "tokenizer.json", tokenizer_json());
    fs::create_directory(dir_ / "docs");
  }
  // `text` as docs/<name>, and its ids encoded alone.
  void document(const std::string& name, const std::string& text) {
    write_text(dir_ / "docs" / name, text);
    texts_[name] = text;
  }
  std::vector<std::int32_t> eot_then(const std::vector<std::string>& names) {
    data::BpeTokenizer tokenizer = data::BpeTokenizer::load(dir_ / "tokenizer.json");
    std::vector<std::int32_t> ids;
    for (const std::string& name : names) {
      ids.push_back(258);
      tokenizer.encode(texts_.at(name), ids);
    }
    return ids;
  }
  ProgramResult prepare(const std::vector<std::string>& args, const std::string& name) {
    std::vector<std::string> all{"prepare-data"};
    all.insert(all.end(), args.begin(), args.end());
    return testing::zerotrain(dir_, all, name);
  }

  const TempDir dir_;
  std::map<std::string, std::string> texts_;
};

TEST_F(PrepareDataDocuments, GlobInputsAreDocumentsInSortedOrderEachAfterEndOfText) {
  // Made out of order; the pattern gives them sorted, then the file named after it.
  document("b.txt", "ab tab\n");
  document("c.txt", "the cab, at last");
  document("a.txt", "a tab ab");
  document("z.md", "not matched by *.txt");
  write_text(dir_ / "extra.txt", "tt ab");
  texts_["extra.txt"] = "tt ab";
  const ProgramResult run =
      prepare({"docs/*.txt", "extra.txt", "out.bin", "--tokenizer", "tokenizer.json"}, "glob");
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_NE(run.out.find("from 4 documents"), std::string::npos) << run.out;
  EXPECT_EQ(testing::read_llmc_tokens(dir_.path() / "out.bin"),
            eot_then({"a.txt", "b.txt", "c.txt", "extra.txt"}));
}

TEST_F(PrepareDataDocuments, ValFractionWritesTheLastWholeDocumentsToTheValFile) {
  document("1.txt", std::string(40, 'a'));
  document("2.txt", std::string(40, 'b'));
  document("3.txt", "ab " + std::string(27, 't'));  // 30 bytes
  document("4.txt", "tab tab ab");                  // 10 bytes
  // 30% of 120 bytes is 36: 4.txt alone holds 10, with 3.txt 40.
  const ProgramResult run = prepare(
      {"docs/*.txt", "out.bin", "--tokenizer=tokenizer.json", "--val-fraction", "0.3"}, "split");
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_EQ(testing::read_llmc_tokens(dir_.path() / "out.bin"), eot_then({"1.txt", "2.txt"}));
  EXPECT_EQ(testing::read_llmc_tokens(dir_.path() / "out_val.bin"), eot_then({"3.txt", "4.txt"}));
  EXPECT_NE(run.out.find("from 2 documents to out_val.bin"), std::string::npos) << run.out;

  // A fraction smaller than the last document still takes it whole; --val-out names the file.
  const ProgramResult small = prepare({"docs/*.txt", "small.bin", "--tokenizer", "tokenizer.json",
                                       "--val-fraction=0.01", "--val-out", "held-out.bin"},
                                      "small");
  ASSERT_EQ(small.exit_code, 0) << small.output();
  EXPECT_EQ(testing::read_llmc_tokens(dir_.path() / "small.bin"),
            eot_then({"1.txt", "2.txt", "3.txt"}));
  EXPECT_EQ(testing::read_llmc_tokens(dir_.path() / "held-out.bin"), eot_then({"4.txt"}));
  EXPECT_FALSE(fs::exists(dir_.path() / "small_val.bin"));
}

TEST_F(PrepareDataDocuments, ByteLevelSeparatesDocumentsOnlyWithEotId) {
  document("a.txt", "xy");
  document("b.txt", "z");
  ASSERT_EQ(prepare({"docs/*.txt", "plain.bin"}, "plain").exit_code, 0);
  EXPECT_EQ(read_zerotrain_tokens(dir_.path() / "plain.bin"),
            (std::vector<std::int32_t>{'x', 'y', 'z'}));
  const ProgramResult eot = prepare({"docs/*.txt", "eot.bin", "--eot-id", "256"}, "eot");
  ASSERT_EQ(eot.exit_code, 0) << eot.output();
  EXPECT_NE(eot.out.find("vocabulary 257"), std::string::npos) << eot.out;
  EXPECT_EQ(read_zerotrain_tokens(dir_.path() / "eot.bin"),
            (std::vector<std::int32_t>{256, 'x', 'y', 256, 'z'}));
}

TEST_F(PrepareDataDocuments, EveryUsageErrorNamesTheArgumentAtFault) {
  document("a.txt", "ab");
  document("b.txt", "ba");
  write_text(dir_ / "no-eot.json", tokenizer_json(false));
  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  const std::vector<Case> cases = {
      {{"docs/*.md", "out.bin"}, "the input pattern 'docs/*.md' matches no file"},
      {{"docs/*.txt"}, "got only 'docs/*.txt'"},
      {{"docs/a.txt", "out.bin", "--val-fraction", "1.5"}, "--val-fraction '1.5'"},
      {{"docs/a.txt", "out.bin", "--val-fraction", "0.1"},
       "--val-fraction 0.1 needs at least two input documents"},
      {{"docs/*.txt", "out.bin", "--val-fraction", "0.1", "--val-out", "out.bin"},
       "--val-out 'out.bin' is OUT itself"},
      {{"docs/*.txt", "out.bin", "--val-out", "v.bin"}, "--val-out 'v.bin' goes with"},
      {{"docs/*.txt", "out.bin", "--tokenizer", "tokenizer.json", "--eot-id", "x1"},
       "--eot-id 'x1'"},
      {{"docs/*.txt", "out.bin", "--tokenizer", "tokenizer.json", "--eot-id", "259"},
       "--eot-id '259' is not a token id for 'tokenizer.json'"},
      {{"docs/*.txt", "out.bin", "--tokenizer", "no-eot.json"},
       "'no-eot.json' has no <|endoftext|> added token"},
      {{"docs/*.txt", "out.bin", "--eot-id"}, "--eot-id needs a token id N"},
      {{"docs/*.txt", "out.bin", "--merges", "m.txt"}, "--merges 'm.txt'"},
      {{"docs/*.txt", "out.bin", "--val-fractoin", "0.1"}, "unknown option '--val-fractoin'"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const ProgramResult run = prepare(cases[i].args, "usage-" + std::to_string(i));
    EXPECT_EQ(run.exit_code, 2) << run.output();
    EXPECT_NE(run.err.find(cases[i].names), std::string::npos) << run.err;
  }
  EXPECT_FALSE(fs::exists(dir_.path() / "out.bin"));
  // The no-eot tokenizer works once told which id separates documents.
  const ProgramResult told =
      prepare({"docs/*.txt", "out.bin", "--tokenizer", "no-eot.json", "--eot-id", "0"}, "told");
  ASSERT_EQ(told.exit_code, 0) << told.output();
  EXPECT_EQ(testing::read_llmc_tokens(dir_.path() / "out.bin"),
            (std::vector<std::int32_t>{0, 256, 0, 'b', 'a'}));
}

}  // namespace
}  // namespace zt
