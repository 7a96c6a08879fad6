// The Markov corpus: seeded transition rows, their stationary distribution and entropy
// rate, and sampling sequences from counter-based uniforms.
#include "data/markov_corpus.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "core/random.h"

namespace zt::data {
namespace {

// V² doubles are held twice (16 MiB at 1024), and power iteration costs V² a step and
// mixes slowly for peaked rows (about 1 s at V = 1024, peakedness 50; 45 s at 4096, 8).
constexpr std::int32_t kMaxVocab = 1024;
// Keeps every softmax entry above double underflow, so every row stays strictly positive.
constexpr double kMaxPeakedness = 50.0;
constexpr int kMaxPowerIterations = 100000;
constexpr double kStationaryTolerance = 1e-14;  // L1 change per iteration

// Note [Markov transition rows]
// Row i is softmax(β·z_i) with z_ij ~ N(0, 1) from counter-based normals keyed by (seed, i).
// Every entry is positive, so the chain is irreducible and aperiodic: π is unique and power
// iteration converges. For β well below sqrt(2 log V) a row's entropy is about log V - β²/2;
// near and above it a few successors dominate each row. The default β = 3.5 gives entropy
// rates of about 1.6, 1.9 and 2.1 nats at V = 64, 128, 256 (log V = 4.16, 4.85, 5.55):
// far below log V, far from zero.
void fill_row(std::uint64_t key, std::int32_t vocab, double peakedness, double* row) {
  double max_logit = -HUGE_VAL;
  for (std::int32_t j = 0; j < vocab; ++j) {
    row[j] = peakedness * standard_normal(key, static_cast<std::uint64_t>(j));
    max_logit = std::max(max_logit, row[j]);
  }
  double sum = 0.0;
  for (std::int32_t j = 0; j < vocab; ++j) {
    row[j] = std::exp(row[j] - max_logit);
    sum += row[j];
  }
  for (std::int32_t j = 0; j < vocab; ++j) row[j] /= sum;
}

// π with π P = π, starting from uniform; P is (V, V) row-stochastic.
std::vector<double> stationary_of(const std::vector<double>& transitions, std::int32_t vocab) {
  const auto v = static_cast<std::size_t>(vocab);
  std::vector<double> pi(v, 1.0 / static_cast<double>(vocab));
  std::vector<double> next(v);
  for (int iteration = 0; iteration < kMaxPowerIterations; ++iteration) {
    std::fill(next.begin(), next.end(), 0.0);
    for (std::size_t i = 0; i < v; ++i) {
      const double* row = transitions.data() + i * v;
      for (std::size_t j = 0; j < v; ++j) next[j] += pi[i] * row[j];
    }
    double sum = 0.0;
    for (double p : next) sum += p;
    double change = 0.0;
    for (std::size_t j = 0; j < v; ++j) {
      next[j] /= sum;
      change += std::abs(next[j] - pi[j]);
    }
    pi.swap(next);
    if (change < kStationaryTolerance) return pi;
  }
  // Positive rows contract at least geometrically; ending here means a bug, not bad input.
  ZT_CHECK(false, "Markov stationary distribution did not converge");
  return pi;
}

void prefix_sums(const double* p, std::size_t count, double* cdf) {
  double running = 0.0;
  for (std::size_t j = 0; j < count; ++j) {
    running += p[j];
    cdf[j] = running;
  }
  cdf[count - 1] = 1.0;  // so a uniform in [0, 1) always lands inside the row
}

}  // namespace

MarkovCorpus::MarkovCorpus(std::uint64_t seed, std::int32_t vocab_size, double peakedness)
    : sequence_key_(random_key(seed, 0x5E0u)), vocab_size_(vocab_size) {
  if (vocab_size < 2 || vocab_size > kMaxVocab) {
    throw ConfigError("Markov corpus: vocab_size must be in [2, " + std::to_string(kMaxVocab) +
                      "], got " + std::to_string(vocab_size));
  }
  if (!(peakedness >= 0.0 && peakedness <= kMaxPeakedness)) {
    throw ConfigError("Markov corpus: peakedness must be in [0, 50], got " +
                      std::to_string(peakedness));
  }
  const auto v = static_cast<std::size_t>(vocab_size);
  transitions_.resize(v * v);
  row_cdf_.resize(v * v);
  const std::uint64_t row_key = random_key(seed, 0x7A4Bu);
  for (std::size_t i = 0; i < v; ++i) {
    fill_row(random_key(row_key, i), vocab_size, peakedness, transitions_.data() + i * v);
    prefix_sums(transitions_.data() + i * v, v, row_cdf_.data() + i * v);
  }
  stationary_ = stationary_of(transitions_, vocab_size);
  stationary_cdf_.resize(v);
  prefix_sums(stationary_.data(), v, stationary_cdf_.data());
  for (std::size_t i = 0; i < v; ++i) {
    double row_entropy = 0.0;
    for (std::size_t j = 0; j < v; ++j) {
      const double p = transitions_[i * v + j];
      if (p > 0.0) row_entropy -= p * std::log(p);
    }
    entropy_rate_nats_ += stationary_[i] * row_entropy;
  }
}

double MarkovCorpus::transition(std::int32_t from, std::int32_t to) const {
  ZT_CHECK(from >= 0 && from < vocab_size_ && to >= 0 && to < vocab_size_, "token outside vocab");
  return transitions_[static_cast<std::size_t>(from) * static_cast<std::size_t>(vocab_size_) +
                      static_cast<std::size_t>(to)];
}

std::int32_t MarkovCorpus::sample_row(const double* cdf, float u) const {
  // The first entry whose inclusive prefix sum exceeds u; zero-probability entries repeat
  // their predecessor's sum and so are never chosen.
  const double* hit = std::upper_bound(cdf, cdf + vocab_size_, static_cast<double>(u));
  return static_cast<std::int32_t>(hit - cdf);
}

void MarkovCorpus::sequence(std::int64_t index, std::span<std::int32_t> out) const {
  ZT_CHECK(index >= 0, "negative sample index");
  if (out.empty()) return;
  const std::uint64_t key = random_key(sequence_key_, static_cast<std::uint64_t>(index));
  const auto v = static_cast<std::size_t>(vocab_size_);
  out[0] = sample_row(stationary_cdf_.data(), uniform01(key, 0));
  for (std::size_t t = 1; t < out.size(); ++t) {
    const double* cdf = row_cdf_.data() + static_cast<std::size_t>(out[t - 1]) * v;
    out[t] = sample_row(cdf, uniform01(key, t));
  }
}

}  // namespace zt::data
