// The Markov corpus: stochastic rows, a stationary π, sequences that are pure functions of
// (seed, index), and an entropy rate that long samples confirm.
#include "data/markov_corpus.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <vector>

#include "core/error.h"

namespace zt::data {
namespace {

constexpr std::uint64_t kSeed = 20240611;

// `sequences` samples of `length` tokens each, concatenated.
std::vector<std::int32_t> sample(const MarkovCorpus& corpus, std::int64_t sequences,
                                 std::size_t length) {
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(sequences) * length);
  for (std::int64_t s = 0; s < sequences; ++s) {
    corpus.sequence(s, std::span(tokens).subspan(static_cast<std::size_t>(s) * length, length));
  }
  return tokens;
}

TEST(MarkovCorpus, RowsSumToOneAndPiIsStationary) {
  const MarkovCorpus corpus(kSeed, 64);
  const auto pi = corpus.stationary();
  double pi_sum = 0.0;
  for (std::int32_t j = 0; j < 64; ++j) {
    double row_sum = 0.0;
    double flow_into_j = 0.0;
    for (std::int32_t i = 0; i < 64; ++i) {
      row_sum += corpus.transition(j, i);
      flow_into_j += pi[static_cast<std::size_t>(i)] * corpus.transition(i, j);
    }
    EXPECT_NEAR(row_sum, 1.0, 1e-12) << "row " << j;
    EXPECT_NEAR(flow_into_j, pi[static_cast<std::size_t>(j)], 1e-12) << "token " << j;
    pi_sum += pi[static_cast<std::size_t>(j)];
  }
  EXPECT_NEAR(pi_sum, 1.0, 1e-12);
}

TEST(MarkovCorpus, SequencesArePureFunctionsOfSeedAndIndex) {
  const MarkovCorpus a(kSeed, 128);
  const MarkovCorpus b(kSeed, 128);
  const MarkovCorpus other(kSeed + 1, 128);
  std::vector<std::int32_t> xa(300), xb(300), xc(300), prefix(40);
  a.sequence(12345, xa);
  b.sequence(12345, xb);
  other.sequence(12345, xc);
  EXPECT_EQ(xa, xb);
  EXPECT_NE(xa, xc);
  b.sequence(12345, prefix);  // a shorter request is a prefix of the same stream
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), xa.begin()));
  b.sequence(12346, xb);
  EXPECT_NE(xa, xb);
}

TEST(MarkovCorpus, DefaultEntropyIsLearnableButNotTrivial) {
  for (std::int32_t vocab : {64, 128, 256}) {
    const MarkovCorpus corpus(kSeed, vocab);
    const double log_vocab = std::log(static_cast<double>(vocab));
    std::cout << "vocab " << vocab << ": entropy rate " << corpus.entropy_rate_nats()
              << " nats (log V = " << log_vocab << ")\n";
    EXPECT_GT(corpus.entropy_rate_nats(), 1.0) << vocab;
    EXPECT_LT(corpus.entropy_rate_nats(), log_vocab - 2.0) << vocab;
  }
  // Peakedness 0 is the uniform chain; more peakedness means less entropy.
  EXPECT_NEAR(MarkovCorpus(kSeed, 64, 0.0).entropy_rate_nats(), std::log(64.0), 1e-12);
  EXPECT_GT(MarkovCorpus(kSeed, 64, 1.5).entropy_rate_nats(),
            MarkovCorpus(kSeed, 64, 3.5).entropy_rate_nats());
}

TEST(MarkovCorpus, EntropyRateMatchesTheMeanSurprisalOfALongSample) {
  const MarkovCorpus corpus(kSeed, 256);
  const std::size_t length = 1001;
  const auto tokens = sample(corpus, 300, length);
  double surprisal = 0.0;
  std::int64_t transitions = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i % length == 0) continue;  // a sequence's first token has no predecessor
    surprisal -= std::log(corpus.transition(tokens[i - 1], tokens[i]));
    ++transitions;
  }
  const double estimate = surprisal / static_cast<double>(transitions);
  std::cout << "mean surprisal " << estimate << " vs entropy rate " << corpus.entropy_rate_nats()
            << "\n";
  EXPECT_NEAR(estimate, corpus.entropy_rate_nats(), 0.02 * corpus.entropy_rate_nats());
}

// The plug-in estimate -Σ n_ab/N log(n_ab/n_a) from bigram counts: what a bigram model can
// learn from the data alone. Biased low by about (cells - rows) / 2N, ~1% here.
TEST(MarkovCorpus, BigramCountsFrom200kTokensApproachTheEntropyRate) {
  const std::int32_t vocab = 64;
  const MarkovCorpus corpus(kSeed, vocab);
  const std::size_t length = 1000;
  const auto tokens = sample(corpus, 200, length);
  const auto v = static_cast<std::size_t>(vocab);
  std::vector<double> pair_counts(v * v, 0.0), row_counts(v, 0.0), unigram(v, 0.0);
  double pairs = 0.0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    unigram[static_cast<std::size_t>(tokens[i])] += 1.0;
    if (i % length == 0) continue;
    const auto a = static_cast<std::size_t>(tokens[i - 1]);
    pair_counts[a * v + static_cast<std::size_t>(tokens[i])] += 1.0;
    row_counts[a] += 1.0;
    pairs += 1.0;
  }
  double entropy = 0.0;
  double total_variation = 0.0;
  for (std::size_t a = 0; a < v; ++a) {
    for (std::size_t b = 0; b < v; ++b) {
      const double n = pair_counts[a * v + b];
      if (n > 0.0) entropy -= n / pairs * std::log(n / row_counts[a]);
    }
    total_variation +=
        0.5 * std::abs(unigram[a] / static_cast<double>(tokens.size()) - corpus.stationary()[a]);
  }
  std::cout << "bigram estimate " << entropy << " vs entropy rate " << corpus.entropy_rate_nats()
            << "; unigram total variation from pi " << total_variation << "\n";
  EXPECT_NEAR(entropy, corpus.entropy_rate_nats(), 0.03 * corpus.entropy_rate_nats());
  EXPECT_LT(total_variation, 0.02);
}

TEST(MarkovCorpus, RejectsAVocabularyItCannotHold) {
  EXPECT_THROW(MarkovCorpus(kSeed, 1), ConfigError);
  EXPECT_THROW(MarkovCorpus(kSeed, 1 << 20), ConfigError);
  EXPECT_THROW(MarkovCorpus(kSeed, 64, -1.0), ConfigError);
  EXPECT_THROW(MarkovCorpus(kSeed, 64, 51.0), ConfigError);
  EXPECT_THROW(MarkovCorpus(kSeed, 1025), ConfigError);
}

}  // namespace
}  // namespace zt::data
