// A synthetic language: a seeded first-order Markov chain over `vocab_size` tokens whose
// entropy rate is known exactly, so a model's loss can be compared with the best possible.
// Sample `index` is a sequence from its own counter-based stream: identical at any world size.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace zt::data {

// Logit scale of the transition rows; see Note [Markov transition rows].
inline constexpr double kDefaultMarkovPeakedness = 3.5;

class MarkovCorpus {
 public:
  // `peakedness` in [0, 50] scales the seeded normal logits of each row: 0 gives uniform rows
  // (entropy log V), larger values concentrate each row on fewer successors. vocab_size is
  // in [2, 1024]; out-of-range arguments throw ConfigError.
  MarkovCorpus(std::uint64_t seed, std::int32_t vocab_size,
               double peakedness = kDefaultMarkovPeakedness);

  std::int32_t vocab_size() const { return vocab_size_; }
  // P(next = to | current = from).
  double transition(std::int32_t from, std::int32_t to) const;
  // The stationary distribution π (π P = π), from power iteration in double.
  std::span<const double> stationary() const { return stationary_; }
  // H = -Σ_i π_i Σ_j P_ij log P_ij: the expected loss, in nats per token, of a model that
  // knows the chain; no model can do better on a long sequence.
  double entropy_rate_nats() const { return entropy_rate_nats_; }

  // Sample `index`: out[0] drawn from π, then each out[t] from row out[t - 1], with the
  // uniforms of stream (seed, index) at counter t. A pure function of (seed, index, t).
  void sequence(std::int64_t index, std::span<std::int32_t> out) const;

 private:
  std::int32_t sample_row(const double* cdf, float u) const;

  std::uint64_t sequence_key_;
  std::int32_t vocab_size_;
  std::vector<double> transitions_;  // (V, V), rows sum to 1
  std::vector<double> row_cdf_;      // (V, V), inclusive prefix sums, last entry exactly 1
  std::vector<double> stationary_;   // (V)
  std::vector<double> stationary_cdf_;
  double entropy_rate_nats_ = 0.0;
};

}  // namespace zt::data
