// Sampling: candidates ordered by logit (ties by id, so the order is total), cut to the top
// k, weighted by exp((logit - max) / temperature) in double, and one uniform draw walked
// along their cumulative weights.
#include "runtime/generate/token_sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/random.h"

namespace zt::generate {
namespace {

constexpr std::uint64_t kSamplingStream = 0x73616d706c65ull;  // "sample"

}  // namespace

TokenSampler::TokenSampler(const SamplingOptions& options, std::int64_t vocab_limit,
                           std::uint64_t stream)
    : options_(options),
      vocab_limit_(vocab_limit),
      key_(random_key(options.seed, kSamplingStream, stream)) {
  ZT_CHECK(vocab_limit > 0, "TokenSampler needs a vocabulary");
  ZT_CHECK(options.temperature >= 0 && std::isfinite(options.temperature) && options.top_k >= 0,
           "TokenSampler: temperature and top_k are checked by the caller");
}

std::int32_t TokenSampler::sample(std::span<const float> logits) {
  ZT_CHECK(static_cast<std::int64_t>(logits.size()) >= vocab_limit_,
           "TokenSampler: " + std::to_string(logits.size()) + " logits for a vocabulary of " +
               std::to_string(vocab_limit_));
  const std::span<const float> real = logits.first(static_cast<std::size_t>(vocab_limit_));
  if (options_.temperature == 0.0) {  // greedy: the first id of the largest logit
    return static_cast<std::int32_t>(std::max_element(real.begin(), real.end()) - real.begin());
  }
  std::vector<std::int32_t> ids(real.size());
  std::iota(ids.begin(), ids.end(), 0);
  const auto more_likely = [&](std::int32_t a, std::int32_t b) {
    const float la = real[static_cast<std::size_t>(a)], lb = real[static_cast<std::size_t>(b)];
    return la > lb || (la == lb && a < b);
  };
  const std::size_t kept = options_.top_k == 0
                               ? ids.size()
                               : std::min(ids.size(), static_cast<std::size_t>(options_.top_k));
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(kept), ids.end(),
                    more_likely);
  ids.resize(kept);
  const double max_logit = real[static_cast<std::size_t>(ids.front())];
  std::vector<double> cumulative(kept);
  double total = 0.0;
  for (std::size_t i = 0; i < kept; ++i) {
    total += std::exp((real[static_cast<std::size_t>(ids[i])] - max_logit) / options_.temperature);
    cumulative[i] = total;
  }
  const double u = static_cast<double>(uniform01(key_, draws_++)) * total;
  const auto chosen = std::upper_bound(cumulative.begin(), cumulative.end(), u);
  return ids[std::min(kept - 1, static_cast<std::size_t>(chosen - cumulative.begin()))];
}

}  // namespace zt::generate
