// Next-token selection from a row of logits, shared by the CPU and CUDA kernels and the host
// sampler: greedy argmax, or a draw from softmax(logits / temperature) over the top k ids, made
// of integer counts and sums only, so that every backend and every reduction order picks the
// same id (Note [Selecting a token in integers]).
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/host_device.h"
#include "nn/kernels/math/dropout_math.h"
#include "nn/kernels/math/exp_math.h"

namespace zt::nn::math {

// Note [Selecting a token in integers]
// A token is selected over a row's first `classes` logits z (the padded columns after them are
// never read: Note [Padded vocabulary]). The ids are ordered by (order_key(z), lower id
// first): order_key maps a float's bits to an unsigned integer that sorts as the floats do
// (+0 above -0, NaN at the ends), so the order is total and any reduction order finds the
// same maximum.
// - Greedy (temperature 0): the first id of the largest logit, as std::max_element.
// - Sampling: the candidates are the top k ids in that order (every id when k is 0 or at
//   least `classes`). The k-th largest key is found by a binary search over its 32 bits, each
//   step a count of keys at or above a value; candidates are the ids above it and, among those
//   equal to it, the lowest ids, as many as k leaves. Each candidate weighs
//   w = exp_f32((z - z_max) / temperature) in (0, 1] (Note [An exp that vectorizes]), held as
//   the integer floor(w 2^32): the best candidate weighs 2^32 exactly and a weight under 2^-32
//   (22 nats below the best at temperature 1) is never drawn. One 64-bit draw d gives the
//   target floor(d total / 2^64) in [0, total), and the candidate chosen is the first in id
//   order whose cumulative weight passes it: a draw exact to 2^-64 of the integer weights.
// Counts and integer sums are associative, so a CUDA block summing in any order gets the CPU's
// bits, and float arithmetic happens per element only (exp_f32 gives the same bits everywhere).
// The draw is core/random.h's uniform stream: sampling_draw(sampling_row_key(seed, row), step)
// is mix64(random_key(seed, kSamplingStream, row) ^ mix64(step)), whose top 24 bits are
// uniform01's.

// What a decode step asks of next-token selection.
struct TokenSampling {
  float temperature = 0.0f;  // 0: greedy; else > 0
  std::int64_t top_k = 0;    // candidates kept, the most likely first; 0: every id
  std::uint64_t seed = 0;
  std::uint64_t step = 0;  // the draw's index in every row's stream (the decoder: the position)
};

inline constexpr std::uint64_t kSamplingStream = 0x73616d706c65ull;  // "sample"

// core/random.h's mix64: splitmix64's step and finalizer.
ZT_HOST_DEVICE std::uint64_t sampling_mix(std::uint64_t x) {
  return splitmix64_mix(x + kSplitMixGamma);
}
// Row `row`'s stream of the seed: core/random.h's random_key(seed, kSamplingStream, row).
ZT_HOST_DEVICE std::uint64_t sampling_row_key(std::uint64_t seed, std::uint64_t row) {
  return sampling_mix(sampling_mix(sampling_mix(seed) ^ kSamplingStream) ^ row);
}
// The 64-bit draw number `step` of a row's stream.
ZT_HOST_DEVICE std::uint64_t sampling_draw(std::uint64_t row_key, std::uint64_t step) {
  return sampling_mix(row_key ^ sampling_mix(step));
}

// An unsigned key that orders as the float does: positive floats above negative ones, and
// within each sign by magnitude.
ZT_HOST_DEVICE std::uint32_t order_key(float z) {
  const std::uint32_t bits = zt::detail::bit_cast<std::uint32_t>(z);
  return (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
}

// Whether id a with key ka comes before id b with key kb: the larger key, then the lower id.
ZT_HOST_DEVICE bool ranks_before(std::uint32_t ka, std::int64_t a, std::uint32_t kb,
                                 std::int64_t b) {
  return ka > kb || (ka == kb && a < b);
}

// The key of the k-th id in the order, 1 <= k <= classes: the largest t with
// count_at_least(t) >= k, where count_at_least(t) counts the row's keys >= t.
template <typename CountAtLeast>
ZT_HOST_DEVICE std::uint32_t top_k_key(std::int64_t k, CountAtLeast&& count_at_least) {
  std::uint32_t key = 0;
  for (int bit = 31; bit >= 0; --bit) {
    const std::uint32_t candidate = key | (1u << bit);
    if (count_at_least(candidate) >= k) key = candidate;
  }
  return key;
}

// Which ids are candidates: those with a key above `key`, and the first `equal_quota` ids (in
// id order) whose key equals it. `all`: every id (top_k 0 or at least classes).
struct TopK {
  bool all = true;
  std::uint32_t key = 0;
  std::int64_t equal_quota = 0;
};

// Whether an id of key `k` is a candidate, given how many ids before it had key == top.key.
ZT_HOST_DEVICE bool is_candidate(const TopK& top, std::uint32_t k, std::int64_t equal_before) {
  return top.all || k > top.key || (k == top.key && equal_before < top.equal_quota);
}

// A candidate's weight floor(exp((z - z_max) / temperature) 2^32), with 1 / temperature given;
// 0 where that is not a number in [0, 1] (an infinite or NaN logit).
ZT_HOST_DEVICE std::uint64_t candidate_weight(float z, float z_max, float inverse_temperature) {
  const float w = exp_f32((z - z_max) * inverse_temperature);
  return w >= 0.0f && w <= 1.0f ? static_cast<std::uint64_t>(w * 4294967296.0f) : 0u;
}

// floor(draw * total / 2^64): the target in [0, total) that the cumulative weights are walked
// to. The high word of the 128-bit product, from 32-bit halves (no __int128 in ISO C++).
ZT_HOST_DEVICE std::uint64_t draw_target(std::uint64_t draw, std::uint64_t total) {
  const std::uint64_t d_low = draw & 0xffffffffu, d_high = draw >> 32;
  const std::uint64_t t_low = total & 0xffffffffu, t_high = total >> 32;
  const std::uint64_t low_low = d_low * t_low;
  const std::uint64_t low_high = d_low * t_high;
  const std::uint64_t high_low = d_high * t_low;
  const std::uint64_t middle =
      (low_low >> 32) + (low_high & 0xffffffffu) + (high_low & 0xffffffffu);
  return d_high * t_high + (low_high >> 32) + (high_low >> 32) + (middle >> 32);
}

// The greedy id of z's first `classes` logits: the first of the largest.
template <typename T>
ZT_HOST_DEVICE std::int64_t greedy_token(const T* z, std::int64_t classes) {
  std::int64_t best = 0;
  std::uint32_t best_key = order_key(static_cast<float>(z[0]));
  for (std::int64_t c = 1; c < classes; ++c) {
    const std::uint32_t key = order_key(static_cast<float>(z[c]));
    if (ranks_before(key, c, best_key, best)) {
      best = c;
      best_key = key;
    }
  }
  return best;
}

// The candidates of z's first `classes` logits under top_k (0: every id).
template <typename T>
ZT_HOST_DEVICE TopK top_k_of(const T* z, std::int64_t classes, std::int64_t top_k) {
  TopK top;
  if (top_k <= 0 || top_k >= classes) return top;
  const auto count_at_least = [&](std::uint32_t t) {
    std::int64_t count = 0;
    for (std::int64_t c = 0; c < classes; ++c) count += order_key(static_cast<float>(z[c])) >= t;
    return count;
  };
  top.all = false;
  top.key = top_k_key(top_k, count_at_least);
  top.equal_quota = top_k - (top.key == 0xffffffffu ? 0 : count_at_least(top.key + 1));
  return top;
}

// The id selected from z's first `classes` logits (Note [Selecting a token in integers]):
// greedy at temperature 0, else the candidate that `draw` (a sampling_draw) lands on.
template <typename T>
ZT_HOST_DEVICE std::int64_t select_token_row(const T* z, std::int64_t classes, float temperature,
                                             std::int64_t top_k, std::uint64_t draw) {
  const std::int64_t best = greedy_token(z, classes);
  if (temperature == 0.0f) return best;
  const TopK top = top_k_of(z, classes, top_k);
  const float z_max = static_cast<float>(z[best]);
  const float inverse_temperature = 1.0f / temperature;
  std::uint64_t total = 0;
  std::int64_t equal_before = 0;
  for (std::int64_t c = 0; c < classes; ++c) {
    const float zc = static_cast<float>(z[c]);
    const std::uint32_t key = order_key(zc);
    if (is_candidate(top, key, equal_before)) {
      total += candidate_weight(zc, z_max, inverse_temperature);
    }
    equal_before += key == top.key;
  }
  if (total == 0) return best;  // an infinite or NaN best logit: no weights to draw by
  const std::uint64_t target = draw_target(draw, total);
  std::uint64_t cumulative = 0;
  equal_before = 0;
  for (std::int64_t c = 0; c < classes; ++c) {
    const float zc = static_cast<float>(z[c]);
    const std::uint32_t key = order_key(zc);
    if (is_candidate(top, key, equal_before)) {
      cumulative += candidate_weight(zc, z_max, inverse_temperature);
      if (cumulative > target) return c;
    }
    equal_before += key == top.key;
  }
  return best;  // not reached: the cumulative weights end at total > target
}

// Row `row`'s token under `sampling`: its draw is number sampling.step of its stream.
template <typename T>
ZT_HOST_DEVICE std::int32_t select_token(const T* z, std::int64_t classes,
                                         const TokenSampling& sampling, std::uint64_t row) {
  const std::uint64_t draw = sampling_draw(sampling_row_key(sampling.seed, row), sampling.step);
  return static_cast<std::int32_t>(
      select_token_row(z, classes, sampling.temperature, sampling.top_k, draw));
}

}  // namespace zt::nn::math
