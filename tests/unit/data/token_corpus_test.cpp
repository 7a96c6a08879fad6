// Token corpora: llm.c and nanoGPT files read back their tokens, bad files are refused with
// the file (and for a bad id its byte offset) named, several files and a glob make one
// corpus whose windows never cross a file, and reading keeps resident memory bounded.
#include "data/token_corpus.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/distributed_sampler.h"
#include "data/llmc_token_file.h"
#include "data/lm_batch.h"
#include "data/token_file.h"
#include "support/error_message.h"
#include "support/foreign_token_files.h"
#include "support/sanitizers.h"
#include "support/temp_dir.h"

namespace zt::data {
namespace {

namespace fs = std::filesystem;
using zt::testing::TempDir;
using zt::testing::write_llmc_file;
using zt::testing::write_nanogpt_file;

constexpr std::uint64_t kSeed = 5;

using zt::testing::message_of;

// Tokens first, first + 1, ...: a window's first input shows where it starts.
std::vector<std::uint32_t> ramp(std::size_t count, std::uint32_t first) {
  std::vector<std::uint32_t> tokens(count);
  std::iota(tokens.begin(), tokens.end(), first);
  return tokens;
}

std::unique_ptr<BatchSource> corpus(const std::vector<fs::path>& paths, TokenFileFormat format,
                                    std::uint32_t vocab, std::int64_t seq_len) {
  std::vector<TokenShard> shards;
  for (const fs::path& path : paths) shards.push_back(open_token_shard(path, format));
  return make_token_corpus_source(std::move(shards), vocab, seq_len, kSeed);
}

// Every window of `batch` is consecutive tokens (inputs and targets shifted by one).
std::vector<std::int32_t> window_starts(const Batch& batch) {
  const auto x = batch.inputs.span<std::int32_t>();
  const auto y = batch.targets.span<std::int32_t>();
  const auto t = static_cast<std::size_t>(batch.inputs.dim(1));
  std::vector<std::int32_t> starts;
  for (std::size_t i = 0; i < static_cast<std::size_t>(batch.samples); ++i) {
    for (std::size_t j = 0; j < t; ++j) {
      EXPECT_EQ(x[i * t + j], x[i * t] + static_cast<std::int32_t>(j)) << "sample " << i;
      EXPECT_EQ(y[i * t + j], x[i * t] + static_cast<std::int32_t>(j) + 1) << "sample " << i;
    }
    starts.push_back(x[i * t]);
  }
  return starts;
}

TEST(LlmcTokenFile, Version1Uint16AndVersion7Uint32ReadBackTheirTokens) {
  TempDir dir;
  write_llmc_file(dir / "v1.bin", ramp(300, 60000), kLlmcMagicU16, 1, 2);
  write_llmc_file(dir / "v7.bin", ramp(300, 100000), kLlmcMagicU32, 7, 4);
  MemoryTracker tracker(Device::cpu());
  for (const auto& [file, first, vocab] :
       {std::tuple{"v1.bin", 60000, 60300u}, std::tuple{"v7.bin", 100000, 100300u}}) {
    const TokenShard shard = open_token_shard(dir / file, TokenFileFormat::kAuto);
    EXPECT_EQ(shard.format, TokenFileFormat::kLlmc);
    EXPECT_EQ(shard.token_count, 300);
    EXPECT_FALSE(shard.header_vocab_size.has_value());
    const auto source = corpus({dir / file}, TokenFileFormat::kLlmc, vocab, 16);
    std::set<std::int32_t> seen;
    for (const std::int32_t start : window_starts(source->load({0, 64}, tracker))) {
      EXPECT_GE(start, first);
      EXPECT_LE(start + 16, first + 299);
      seen.insert(start);
    }
    EXPECT_GT(seen.size(), 40u) << file;
  }
}

TEST(NanogptTokenFile, HeaderlessUint16IsReadOnlyWhenAskedFor) {
  TempDir dir;
  write_nanogpt_file(dir / "train.bin", ramp(500, 1000));
  MemoryTracker tracker(Device::cpu());
  const auto source = corpus({dir / "train.bin"}, TokenFileFormat::kNanogpt, 1500, 32);
  for (const std::int32_t start : window_starts(source->load({0, 32}, tracker))) {
    EXPECT_GE(start, 1000);
    EXPECT_LE(start + 32, 1499);
  }
  EXPECT_CONTAINS(
      message_of<FormatError>([&] { open_token_shard(dir / "train.bin", TokenFileFormat::kAuto); }),
      "data.format = \"nanogpt\"");
  write_nanogpt_file(dir / "odd.bin", ramp(10, 0));
  std::ofstream(dir / "odd.bin", std::ios::app) << 'x';
  EXPECT_CONTAINS(message_of<FormatError>(
                      [&] { open_token_shard(dir / "odd.bin", TokenFileFormat::kNanogpt); }),
                  "odd");
}

TEST(LlmcTokenFile, WrongMagicWrongVersionAndSizeMismatchAreRefusedNamingTheFile) {
  TempDir dir;
  write_llmc_file(dir / "magic.bin", ramp(10, 0), 20240521, 1, 2);
  const std::string magic =
      message_of<FormatError>([&] { open_token_shard(dir / "magic.bin", TokenFileFormat::kLlmc); });
  EXPECT_CONTAINS(magic, (dir / "magic.bin").string());
  EXPECT_CONTAINS(magic, "20240521");

  write_llmc_file(dir / "version.bin", ramp(10, 0), kLlmcMagicU16, 7, 2);
  const std::string version = message_of<FormatError>(
      [&] { open_token_shard(dir / "version.bin", TokenFileFormat::kAuto); });
  EXPECT_CONTAINS(version, (dir / "version.bin").string());
  EXPECT_CONTAINS(version, "version 7");

  write_llmc_file(dir / "size.bin", ramp(10, 0), kLlmcMagicU32, 7, 4, 12);
  const std::string size =
      message_of<FormatError>([&] { open_token_shard(dir / "size.bin", TokenFileFormat::kAuto); });
  EXPECT_CONTAINS(size, (dir / "size.bin").string());
  EXPECT_CONTAINS(size, "says 12 tokens");
  EXPECT_CONTAINS(size, "it is 1064 bytes");
}

TEST(TokenCorpus, AnIdPastTheVocabularyNamesTheFileAndItsByteOffset) {
  TempDir dir;
  std::vector<std::uint32_t> tokens(40, 7);
  tokens[25] = 50257;
  write_llmc_file(dir / "bad.bin", tokens, kLlmcMagicU16, 1, 2);
  MemoryTracker tracker(Device::cpu());
  // Windows of 40 tokens: the only one holds the bad id.
  const auto source = corpus({dir / "bad.bin"}, TokenFileFormat::kAuto, 50257, 39);
  const std::string message = message_of<FormatError>([&] { source->load({0, 1}, tracker); });
  EXPECT_CONTAINS(message, (dir / "bad.bin").string());
  EXPECT_CONTAINS(message, "token 50257 at byte offset 1074");  // 1024 + 25 * 2
  EXPECT_CONTAINS(message, "vocabulary of 50257");
}

TEST(TokenCorpus, SeveralFilesAndAGlobMakeOneCorpusInSortedOrder) {
  TempDir dir;
  write_llmc_file(dir / "shard_001.bin", ramp(100, 1000), kLlmcMagicU16, 1, 2);
  write_llmc_file(dir / "shard_000.bin", ramp(100, 0), kLlmcMagicU16, 1, 2);
  write_token_file(
      dir / "shard_002.bin",
      [] {
        std::vector<std::int32_t> t(100);
        std::iota(t.begin(), t.end(), 2000);
        return t;
      }(),
      3000);
  const auto paths = expand_token_path((dir / "shard_*.bin").string());
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_EQ(paths[0].filename(), "shard_000.bin");
  EXPECT_EQ(paths[2].filename(), "shard_002.bin");
  EXPECT_TRUE(expand_token_path((dir / "none_*.bin").string()).empty());
  EXPECT_EQ(expand_token_path("plain.bin"), std::vector<fs::path>{"plain.bin"});

  MemoryTracker tracker(Device::cpu());
  const auto source = corpus(paths, TokenFileFormat::kAuto, 3000, 10);
  std::set<int> files_seen;
  for (const std::int32_t start : window_starts(source->load({0, 200}, tracker))) {
    files_seen.insert(start / 1000);
  }
  EXPECT_EQ(files_seen, (std::set<int>{0, 1, 2}));
}

TEST(TokenCorpus, WindowsNeverCrossAFileBoundary) {
  TempDir dir;
  // Files of 1.5 windows each: a window across a boundary would show a jump in its ramp.
  const std::int64_t seq_len = 15;
  std::vector<fs::path> paths;
  for (std::uint32_t f = 0; f < 4; ++f) {
    paths.push_back(dir / ("f" + std::to_string(f) + ".bin"));
    write_llmc_file(paths.back(), ramp(24, 100 * f), kLlmcMagicU16, 1, 2);
  }
  MemoryTracker tracker(Device::cpu());
  const auto source = corpus(paths, TokenFileFormat::kLlmc, 400, seq_len);
  std::set<std::int32_t> starts;
  for (const std::int32_t start : window_starts(source->load({0, 400}, tracker))) {
    const std::int32_t file_first = start / 100 * 100;
    EXPECT_LE(start + seq_len, file_first + 23) << "window from " << start << " leaves its file";
    starts.insert(start);
  }
  EXPECT_EQ(starts.size(), 4u * 9u);  // every window of every file, 24 - 15 starts each
}

TEST(TokenCorpus, AFileShorterThanAWindowIsRefusedByName) {
  TempDir dir;
  write_llmc_file(dir / "long.bin", ramp(100, 0), kLlmcMagicU16, 1, 2);
  write_llmc_file(dir / "short.bin", ramp(10, 0), kLlmcMagicU16, 1, 2);
  const std::string message = message_of<FormatError>([&] {
    corpus({dir / "long.bin", dir / "short.bin"}, TokenFileFormat::kAuto, 100, 16);
  });
  EXPECT_CONTAINS(message, (dir / "short.bin").string());
  EXPECT_CONTAINS(message, "holds 10 tokens");
}

TEST(TokenCorpus, OneZerotrainFileKeepsTheInMemoryWindowOrder) {
  TempDir dir;
  std::vector<std::int32_t> tokens(3000);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::int32_t>(i % 251);
  write_token_file(dir / "t.bin", tokens, 256);
  MemoryTracker tracker(Device::cpu());
  const auto streamed = corpus({dir / "t.bin"}, TokenFileFormat::kAuto, 1 << 20, 20);
  const auto in_memory = make_token_file_source(TokenFile::open(dir / "t.bin"), 20, kSeed);
  const Batch a = streamed->load({100, 64}, tracker);
  const Batch b = in_memory->load({100, 64}, tracker);
  EXPECT_TRUE(std::equal(a.inputs.span<std::int32_t>().begin(), a.inputs.span<std::int32_t>().end(),
                         b.inputs.span<std::int32_t>().begin()));
}

// The process's resident bytes now (VmRSS), not its peak.
std::int64_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  ADD_FAILURE() << "no VmRSS in /proc/self/status";
  return 0;
}

TEST(TokenCorpus, ResidentMemoryStaysBoundedOverA256MiBFile) {
  if (zt::testing::kAddressSanitizer) GTEST_SKIP() << zt::testing::kResidentMemoryUnderAsan;
  TempDir dir;
  // A sparse llm.c file of 128 Mi uint16 tokens (zeros, valid ids): 256 MiB, written in no
  // time; read whole into i32 it would add 512 MiB.
  constexpr std::uint32_t kTokens = 128u << 20;
  write_llmc_file(dir / "big.bin", {}, kLlmcMagicU16, 1, 2, kTokens);
  ASSERT_EQ(::truncate((dir / "big.bin").c_str(), kLlmcHeaderBytes + std::uint64_t{kTokens} * 2),
            0);
  MemoryTracker tracker(Device::cpu());
  const std::int64_t before = resident_bytes();
  const auto started = std::chrono::steady_clock::now();
  const auto source = corpus({dir / "big.bin"}, TokenFileFormat::kAuto, 50257, 1024);
  for (std::int64_t step = 0; step < 500; ++step) {
    const DistributedSampler sampler(8, 1, 1, 0);
    const Batch batch = source->load(sampler.micro_batch(step, 0), tracker);
    ASSERT_EQ(batch.inputs.span<std::int32_t>()[0], 0);
  }
  const std::int64_t grown = resident_bytes() - before;
  EXPECT_LT(grown, std::int64_t{16} << 20) << "resident memory grew by " << grown << " bytes";
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
}

}  // namespace
}  // namespace zt::data

namespace zt::data {
namespace {

// Note [Validation split]: the last ceil(f x n) tokens of every file are validation's; no
// training window reads one of them, and validation windows read nothing else.
TEST(ValidationSplit, TheLastTokensOfEachFileAreHeldOutFromTraining) {
  TempDir dir;
  write_nanogpt_file(dir / "a.bin", ramp(200, 0));
  write_nanogpt_file(dir / "b.bin", ramp(100, 1000));
  std::vector<TokenShard> training;
  std::vector<TokenShard> validation;
  for (const char* file : {"a.bin", "b.bin"}) {
    const ValidationSplit split =
        split_off_validation(open_token_shard(dir / file, TokenFileFormat::kNanogpt), 0.25, 8);
    training.push_back(split.training);
    validation.push_back(split.validation);
  }
  // a: 50 held (150..199); b: 25 held (1075..1099).
  EXPECT_EQ(training[0].tokens, 150);
  EXPECT_EQ(validation[0].first_token, 150);
  EXPECT_EQ(validation[1].tokens, 25);
  const auto in_validation = [](std::int32_t token) {
    return (token >= 150 && token < 200) || token >= 1075;
  };
  MemoryTracker tracker(Device::cpu());
  const auto train_source = make_token_corpus_source(training, 2000, 8, kSeed);
  const Batch train_batch = train_source->load({0, 512}, tracker);
  for (const std::int32_t start : window_starts(train_batch)) {
    EXPECT_FALSE(in_validation(start) || in_validation(start + 8)) << "window at " << start;
  }
  const auto val_source = make_token_corpus_source(validation, 2000, 8, kSeed);
  std::set<std::int32_t> seen;
  for (const std::int32_t start : window_starts(val_source->load({0, 256}, tracker))) {
    EXPECT_TRUE(in_validation(start) && in_validation(start + 8)) << "window at " << start;
    seen.insert(start);
  }
  // Both files' held-out parts are read: 42 windows in a's, 17 in b's.
  EXPECT_GT(seen.size(), 45u);
}

TEST(ValidationSplit, AFileTooShortToSplitIsRefusedByName) {
  TempDir dir;
  write_nanogpt_file(dir / "short.bin", ramp(40, 0));
  const TokenShard shard = open_token_shard(dir / "short.bin", TokenFileFormat::kNanogpt);
  const std::string message = message_of<FormatError>([&] { split_off_validation(shard, 0.1, 8); });
  EXPECT_CONTAINS(message, "short.bin");
  EXPECT_CONTAINS(message, "data.val_fraction");
  EXPECT_CONTAINS(message, "4 for validation");
}

}  // namespace
}  // namespace zt::data
