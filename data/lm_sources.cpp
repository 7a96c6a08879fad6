// BatchSources for language modelling: the synthetic Markov corpus and token files. Both
// cut a window of seq_len + 1 tokens per sample; inputs are its first T, targets its last T.
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/random.h"
#include "data/lm_batch.h"

namespace zt::data {
namespace {

struct LmBatch {
  Batch batch;
  std::int32_t* inputs = nullptr;   // (b, T)
  std::int32_t* targets = nullptr;  // (b, T)
};

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

// Splits a window of T + 1 tokens into row `i` of inputs and targets.
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

class TokenFileSource final : public BatchSource {
 public:
  TokenFileSource(TokenFile file, std::int64_t seq_len, std::uint64_t seed)
      : file_(std::move(file)), seq_len_(seq_len), window_key_(random_key(seed, 0x7F11Eu)) {
    if (file_.size() < seq_len_ + 1) {
      throw FormatError("token file '" + file_.path().string() + "' holds " +
                        std::to_string(file_.size()) +
                        " tokens, fewer than seq_len + 1 = " + std::to_string(seq_len_ + 1) +
                        "; use a larger corpus or a shorter seq_len");
    }
  }

  Batch load(SampleRange range, MemoryTracker& tracker) const override {
    LmBatch out = allocate_lm_batch(range, seq_len_, tracker);
    // Windows may start at 0 .. size - T - 1, so the last target is the last token.
    const auto starts = static_cast<std::uint64_t>(file_.size() - seq_len_);
    const std::int32_t* tokens = file_.tokens().data();
    for (std::int64_t i = 0; i < range.count; ++i) {
      const auto sample = static_cast<std::uint64_t>(range.first + i);
      const auto start = static_cast<std::int64_t>(mix64(window_key_ ^ sample) % starts);
      split_window(tokens + start, seq_len_, i, out);
    }
    return std::move(out.batch);
  }

 private:
  TokenFile file_;
  std::int64_t seq_len_;
  std::uint64_t window_key_;
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
  return make_token_file_source(TokenFile::open(path), seq_len, seed);
}

std::unique_ptr<BatchSource> make_token_file_source(TokenFile file, std::int64_t seq_len,
                                                    std::uint64_t seed) {
  check_seq_len(seq_len);
  return std::make_unique<TokenFileSource>(std::move(file), seq_len, seed);
}

}  // namespace zt::data
