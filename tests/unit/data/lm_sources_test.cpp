// Language-model batch sources: targets are inputs shifted by one, and sample i is the same
// whichever instance, rank or world size loads it.
#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/distributed_sampler.h"
#include "data/lm_batch.h"
#include "support/temp_dir.h"

namespace zt::data {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kSeed = 77;

using zt::testing::TempDir;

std::vector<std::int32_t> row(const Tensor& tensor, std::int64_t i) {
  const auto span = tensor.span<std::int32_t>();
  const auto t = static_cast<std::size_t>(tensor.dim(1));
  return {span.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(i) * t),
          span.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(i + 1) * t)};
}

// The global batch of `step` as `world` ranks of micro-batch `micro` load it, rank by rank.
std::vector<std::int32_t> global_inputs(const BatchSource& source, std::int64_t micro, int world,
                                        std::int64_t step, MemoryTracker& tracker) {
  std::vector<std::int32_t> all;
  for (int rank = 0; rank < world; ++rank) {
    const DistributedSampler sampler(micro, 1, world, rank);
    const Batch batch = source.load(sampler.micro_batch(step, 0), tracker);
    const auto span = batch.inputs.span<std::int32_t>();
    all.insert(all.end(), span.begin(), span.end());
  }
  return all;
}

TEST(MarkovSource, TargetsAreInputsShiftedByOne) {
  MemoryTracker tracker(Device::cpu());
  const std::int64_t seq_len = 16;
  const auto source = make_markov_source(kSeed, 64, seq_len);
  const Batch batch = source->load({5, 3}, tracker);
  EXPECT_EQ(batch.samples, 3);
  EXPECT_EQ(batch.inputs.shape(), (Shape{3, seq_len}));
  EXPECT_EQ(batch.targets.shape(), (Shape{3, seq_len}));
  EXPECT_EQ(batch.inputs.dtype(), DType::kI32);
  const MarkovCorpus corpus(kSeed, 64);
  std::vector<std::int32_t> window(static_cast<std::size_t>(seq_len + 1));
  for (std::int64_t i = 0; i < 3; ++i) {
    corpus.sequence(5 + i, window);
    EXPECT_EQ(row(batch.inputs, i), std::vector<std::int32_t>(window.begin(), window.end() - 1));
    EXPECT_EQ(row(batch.targets, i), std::vector<std::int32_t>(window.begin() + 1, window.end()));
  }
}

TEST(MarkovSource, GlobalBatchIsTheSameAtEveryWorldSize) {
  MemoryTracker tracker(Device::cpu());
  const auto a = make_markov_source(kSeed, 128, 32);
  const auto b = make_markov_source(kSeed, 128, 32);
  const auto reference = global_inputs(*a, 8, 1, 3, tracker);
  EXPECT_EQ(global_inputs(*b, 4, 2, 3, tracker), reference);
  EXPECT_EQ(global_inputs(*b, 2, 4, 3, tracker), reference);
  EXPECT_NE(global_inputs(*a, 8, 1, 4, tracker), reference);
}

TEST(TokenFileSource, WindowsAreSlicesOfTheFileAndTargetsAreShiftedByOne) {
  TempDir dir;
  std::vector<std::int32_t> tokens(5000);
  std::iota(tokens.begin(), tokens.end(), 0);  // token = position, so a window shows its start
  write_token_file(dir / "t.bin", tokens, 5000);
  MemoryTracker tracker(Device::cpu());
  const std::int64_t seq_len = 64;
  const auto source = make_token_file_source(dir / "t.bin", seq_len, kSeed);
  const Batch batch = source->load({0, 32}, tracker);
  EXPECT_EQ(batch.inputs.shape(), (Shape{32, seq_len}));
  std::set<std::int32_t> starts;
  for (std::int64_t i = 0; i < 32; ++i) {
    const auto x = row(batch.inputs, i);
    const auto y = row(batch.targets, i);
    const std::int32_t start = x[0];
    ASSERT_LE(start + seq_len, 4999);
    for (std::int64_t t = 0; t < seq_len; ++t) {
      EXPECT_EQ(x[static_cast<std::size_t>(t)], start + t);
      EXPECT_EQ(y[static_cast<std::size_t>(t)], start + t + 1);
    }
    starts.insert(start);
  }
  EXPECT_GT(starts.size(), 28u);  // positions are spread, not a fixed stride from 0
}

TEST(TokenFileSource, GlobalBatchIsTheSameAtEveryWorldSizeAndDependsOnTheSeed) {
  TempDir dir;
  std::vector<std::int32_t> tokens(3000);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::int32_t>(i % 251);
  write_token_file(dir / "t.bin", tokens, 256);
  MemoryTracker tracker(Device::cpu());
  const auto a = make_token_file_source(dir / "t.bin", 20, kSeed);
  const auto b = make_token_file_source(TokenFile::open(dir / "t.bin"), 20, kSeed);
  const auto other_seed = make_token_file_source(dir / "t.bin", 20, kSeed + 1);
  const auto reference = global_inputs(*a, 8, 1, 2, tracker);
  EXPECT_EQ(global_inputs(*b, 4, 2, 2, tracker), reference);
  EXPECT_EQ(global_inputs(*b, 1, 8, 2, tracker), reference);
  EXPECT_NE(global_inputs(*other_seed, 8, 1, 2, tracker), reference);
}

TEST(TokenFileSource, EveryStartIsReachableIncludingTheLastWindow) {
  TempDir dir;
  const std::int64_t seq_len = 8;
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(seq_len + 4));
  std::iota(tokens.begin(), tokens.end(), 0);
  write_token_file(dir / "t.bin", tokens, 100);
  MemoryTracker tracker(Device::cpu());
  const auto source = make_token_file_source(dir / "t.bin", seq_len, kSeed);
  const Batch batch = source->load({0, 200}, tracker);
  std::set<std::int32_t> starts;
  for (std::int64_t i = 0; i < 200; ++i) starts.insert(row(batch.inputs, i)[0]);
  EXPECT_EQ(starts, (std::set<std::int32_t>{0, 1, 2, 3}));
}

TEST(TokenFileSource, FileShorterThanOneWindowIsAFormatError) {
  TempDir dir;
  write_token_file(dir / "short.bin", std::vector<std::int32_t>(16, 3), 256);
  std::string message;
  try {
    make_token_file_source(dir / "short.bin", 16, kSeed);
  } catch (const FormatError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find((dir / "short.bin").string()), std::string::npos) << message;
  EXPECT_NE(message.find("holds 16 tokens"), std::string::npos) << message;
  EXPECT_NE(message.find("seq_len + 1 = 17"), std::string::npos) << message;
  EXPECT_NO_THROW(make_token_file_source(dir / "short.bin", 15, kSeed));
}

}  // namespace
}  // namespace zt::data
