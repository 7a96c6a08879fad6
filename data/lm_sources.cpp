// BatchSources for language modelling: the synthetic Markov corpus and token files. Both
// cut a window of seq_len + 1 tokens per sample; inputs are its first T, targets its last T.
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "data/lm_batch.h"
#include "data/lm_batch_internal.h"
#include "data/token_corpus.h"
#include "data/window_index.h"

namespace zt::data {
namespace lm_internal {

LmBatch allocate_lm_batch(SampleRange range, std::int64_t seq_len, MemoryTracker& tracker) {
  ZT_CHECK(range.first >= 0 && range.count >= 0, "negative sample range");
  LmBatch out;
  out.batch.samples = range.count;
  out.batch.inputs = Tensor::zeros(Shape{range.count, seq_len}, DType::kI32, tracker,
                                   MemoryCategory::kActivations);
  out.batch.targets = Tensor::zeros(Shape{range.count, seq_len}, DType::kI32, tracker,
                                    MemoryCategory::kActivations);
  out.inputs = out.batch.inputs.data_as<std::int32_t>();
  out.targets = out.batch.targets.data_as<std::int32_t>();
  return out;
}

void split_window(const std::int32_t* window, std::int64_t seq_len, std::int64_t i, LmBatch& out) {
  std::int32_t* x = out.inputs + i * seq_len;
  std::int32_t* y = out.targets + i * seq_len;
  for (std::int64_t t = 0; t < seq_len; ++t) {
    x[t] = window[t];
    y[t] = window[t + 1];
  }
}

void check_seq_len(std::int64_t seq_len) {
  if (seq_len < 1) {
    throw ConfigError("language-model data: seq_len must be >= 1, got " + std::to_string(seq_len));
  }
}

void check_holds_a_window(const std::filesystem::path& path, std::int64_t tokens,
                          std::int64_t seq_len) {
  if (tokens < seq_len + 1) {
    throw FormatError("token file '" + path.string() + "' holds " + std::to_string(tokens) +
                      " tokens, fewer than seq_len + 1 = " + std::to_string(seq_len + 1) +
                      "; use a larger corpus or a shorter seq_len");
  }
}

}  // namespace lm_internal
namespace {

using namespace lm_internal;

class MarkovSource final : public BatchSource {
 public:
  MarkovSource(std::uint64_t seed, std::int32_t vocab_size, std::int64_t seq_len, double peakedness)
      : corpus_(seed, vocab_size, peakedness), seq_len_(seq_len) {}

  Batch load(SampleRange range, MemoryTracker& tracker) const override {
    LmBatch out = allocate_lm_batch(range, seq_len_, tracker);
    std::vector<std::int32_t> window(static_cast<std::size_t>(seq_len_ + 1));
    for (std::int64_t i = 0; i < range.count; ++i) {
      corpus_.sequence(range.first + i, window);
      split_window(window.data(), seq_len_, i, out);
    }
    return std::move(out.batch);
  }

 private:
  MarkovCorpus corpus_;
  std::int64_t seq_len_;
};

// A token file already in memory (TokenFile::open checked every id).
class TokenFileSource final : public BatchSource {
 public:
  TokenFileSource(TokenFile file, std::int64_t seq_len, std::uint64_t seed)
      : file_(std::move(file)),
        seq_len_(seq_len),
        windows_(checked_sizes(file_, seq_len), seq_len, seed) {}

  Batch load(SampleRange range, MemoryTracker& tracker) const override {
    LmBatch out = allocate_lm_batch(range, seq_len_, tracker);
    const std::int32_t* tokens = file_.tokens().data();
    for (std::int64_t i = 0; i < range.count; ++i) {
      split_window(tokens + windows_.locate(range.first + i).first_token, seq_len_, i, out);
    }
    return std::move(out.batch);
  }

 private:
  static std::vector<std::int64_t> checked_sizes(const TokenFile& file, std::int64_t seq_len) {
    check_holds_a_window(file.path(), file.size(), seq_len);
    return {file.size()};
  }

  TokenFile file_;
  std::int64_t seq_len_;
  WindowIndex windows_;
};

}  // namespace

std::unique_ptr<BatchSource> make_markov_source(std::uint64_t seed, std::int32_t vocab_size,
                                                std::int64_t seq_len, double peakedness) {
  check_seq_len(seq_len);
  return std::make_unique<MarkovSource>(seed, vocab_size, seq_len, peakedness);
}

std::unique_ptr<BatchSource> make_token_file_source(const std::filesystem::path& path,
                                                    std::int64_t seq_len, std::uint64_t seed) {
  check_seq_len(seq_len);
  TokenShard shard = open_token_shard(path, TokenFileFormat::kZerotrain);
  const std::uint32_t vocab_size = *shard.header_vocab_size;
  std::vector<TokenShard> shards;
  shards.push_back(std::move(shard));
  return make_token_corpus_source(std::move(shards), vocab_size, seq_len, seed);
}

std::unique_ptr<BatchSource> make_token_file_source(TokenFile file, std::int64_t seq_len,
                                                    std::uint64_t seed) {
  check_seq_len(seq_len);
  return std::make_unique<TokenFileSource>(std::move(file), seq_len, seed);
}

}  // namespace zt::data
