// Dropout masks drawn from a counter-based hash, shared by the CPU and CUDA kernels: whether
// element i of sample s is kept is a pure function of its coordinates, never of an RNG's state.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace zt::nn::math {

// Note [Dropout masks from a hash]
// Every mask bit is a hash of (run.seed, step, sample, layer, site, element): the sample is
// its index in the step's global batch, not in the rank's micro-batch, so any world size,
// ZeRO stage or micro-batch split of the same global batch draws the same masks; backward
// and an activation-checkpointing recompute regenerate forward's mask instead of storing it
// (no activation memory, no state to save in a checkpoint); and a resumed run draws what the
// uninterrupted one would have. The hash is splitmix64 (Steele, Lea and Flood 2014): its
// finalizer turns (seed, step, layer, site) into a stream key and then a sample into a row
// key; element i is the i-th splitmix64 output from that row key. Its top 32 bits compared
// with the threshold p 2^32 keep each element with probability 1 - p.

// Where in a block a mask applies; part of the hash, so two sites never share a mask.
enum class DropoutSite : std::uint32_t {
  kEmbedding = 1,        // after the token (+ position) embedding
  kAttentionOutput = 2,  // the attention's output projection, before its residual add
  kMlpOutput = 3,        // the MLP's output projection, before its residual add
  kAttentionProbs = 4,   // the attention probabilities, inside the attention kernels
};

inline constexpr std::uint64_t kSplitMixGamma = 0x9e3779b97f4a7c15ULL;

// splitmix64's finalizer: a bijection of 64-bit words whose outputs pass BigCrush.
ZT_HOST_DEVICE std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The key of one (seed, step, layer, site): each coordinate folded in through the mix, so a
// change in any of them gives an unrelated stream.
ZT_HOST_DEVICE std::uint64_t dropout_stream(std::uint64_t seed, std::int64_t step,
                                            std::int64_t layer, DropoutSite site) {
  std::uint64_t key = splitmix64_mix(seed + kSplitMixGamma);
  key = splitmix64_mix(key ^ static_cast<std::uint64_t>(step));
  key = splitmix64_mix(key ^ static_cast<std::uint64_t>(layer));
  return splitmix64_mix(key ^ static_cast<std::uint64_t>(site));
}

// The key of sample `sample` (its index in the global batch) in `stream`.
ZT_HOST_DEVICE std::uint64_t dropout_row(std::uint64_t stream, std::int64_t sample) {
  return splitmix64_mix(stream ^ splitmix64_mix(static_cast<std::uint64_t>(sample) + 1));
}

// splitmix64's state at element `index` of the row: row + (index + 1) gamma, so element
// index + 1's is dropout_next_counter of it (a row loop adds instead of multiplying).
ZT_HOST_DEVICE std::uint64_t dropout_counter(std::uint64_t row, std::int64_t index) {
  return row + (static_cast<std::uint64_t>(index) + 1) * kSplitMixGamma;
}
ZT_HOST_DEVICE std::uint64_t dropout_next_counter(std::uint64_t counter) {
  return counter + kSplitMixGamma;
}

// Whether the element of splitmix64 state `counter` is kept: p 2^32 <= the top 32 bits of its
// output (threshold from dropout_threshold).
ZT_HOST_DEVICE bool dropout_keep_counter(std::uint64_t counter, std::uint32_t threshold) {
  return static_cast<std::uint32_t>(splitmix64_mix(counter) >> 32) >= threshold;
}

// Whether element `index` of the row is kept.
ZT_HOST_DEVICE bool dropout_keep(std::uint64_t row, std::int64_t index, std::uint32_t threshold) {
  return dropout_keep_counter(dropout_counter(row, index), threshold);
}

// p 2^32 rounded down, for p in [0, 1): a kept fraction of 1 - p within 2^-32.
ZT_HOST_DEVICE std::uint32_t dropout_threshold(float p) {
  const double scaled = static_cast<double>(p) * 4294967296.0;
  return scaled >= 4294967295.0 ? 0xffffffffu : static_cast<std::uint32_t>(scaled);
}

// Inverted dropout of one element: x / (1 - p) where kept (scale = 1 / (1 - p)), else 0, so
// the expected value is x and evaluation needs no rescaling. The same function is its own
// backward: dx = dy / (1 - p) where kept, else 0.
ZT_HOST_DEVICE float dropout_apply(float x, bool keep, float scale) {
  return keep ? x * scale : 0.0f;
}

// What a kernel needs to drop a tensor whose leading axis is samples: row s is sample
// first_sample + s of the global batch, and its elements are indexed from 0 within the row.
struct DropoutMask {
  std::uint64_t stream = 0;  // dropout_stream(seed, step, layer, site)
  std::int64_t first_sample = 0;
  std::uint32_t threshold = 0;  // dropout_threshold(p)
  float scale = 1.0f;           // 1 / (1 - p)
};

}  // namespace zt::nn::math
