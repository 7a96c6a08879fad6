// Sampling on the host through the same row function as the kernels' select_tokens
// (nn/kernels/math/token_select_math.h), so the host and every device pick the same id for the
// same logits and draw.
#include "runtime/generate/token_sampler.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "nn/kernels/math/token_select_math.h"

namespace zt::generate {

TokenSampler::TokenSampler(const SamplingOptions& options, std::int64_t vocab_limit,
                           std::uint64_t stream)
    : options_(options),
      vocab_limit_(vocab_limit),
      key_(nn::math::sampling_row_key(options.seed, stream)) {
  ZT_CHECK(vocab_limit > 0, "TokenSampler needs a vocabulary");
  ZT_CHECK(options.temperature >= 0 && std::isfinite(options.temperature) && options.top_k >= 0,
           "TokenSampler: temperature and top_k are checked by the caller");
}

std::int32_t TokenSampler::sample(std::span<const float> logits) {
  ZT_CHECK(static_cast<std::int64_t>(logits.size()) >= vocab_limit_,
           "TokenSampler: " + std::to_string(logits.size()) + " logits for a vocabulary of " +
               std::to_string(vocab_limit_));
  const std::uint64_t draw = nn::math::sampling_draw(key_, draws_++);
  return static_cast<std::int32_t>(nn::math::select_token_row(
      logits.data(), vocab_limit_, static_cast<float>(options_.temperature), options_.top_k, draw));
}

}  // namespace zt::generate
