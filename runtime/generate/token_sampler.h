// TokenSampler: the next token from a row of host logits: greedy argmax (temperature 0), or a
// draw from softmax(logits / temperature) over the top-k ids, by the arithmetic the kernels'
// select_tokens runs (Note [Selecting a token in integers] in
// nn/kernels/math/token_select_math.h), so the same logits and draw pick the same id on the
// host and on every device.
#pragma once

#include <cstdint>
#include <span>

namespace zt::generate {

struct SamplingOptions {
  double temperature = 1.0;  // 0: greedy; else > 0
  std::int64_t top_k = 0;    // candidates kept, the most likely first; 0: every id
  std::uint64_t seed = 0;
};

class TokenSampler {
 public:
  // Only ids below `vocab_limit` are ever drawn (the tokenizer's vocabulary: the model's
  // padded rows past it are never real tokens). `stream` picks one of the seed's independent
  // streams of draws (a batch's row index: Note [A stream per row]); stream 0 is the one a
  // single prompt draws from.
  TokenSampler(const SamplingOptions& options, std::int64_t vocab_limit, std::uint64_t stream = 0);

  // The next id after `logits` (at least vocab_limit entries). Call n draws number n of the
  // stream (select_tokens' sampling.step n).
  std::int32_t sample(std::span<const float> logits);

 private:
  SamplingOptions options_;
  std::int64_t vocab_limit_;
  std::uint64_t key_;
  std::uint64_t draws_ = 0;
};

}  // namespace zt::generate
