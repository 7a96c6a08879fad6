// The distributed sampler and the synthetic task: same global batch at every world size,
// even shares of a fixed set, samples a pure function of (seed, index).
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "data/batch.h"
#include "data/distributed_sampler.h"
#include "data/synthetic_classification.h"

namespace zt::data {
namespace {

std::multiset<std::int64_t> global_batch(std::int64_t micro, std::int64_t accum, int world,
                                         std::int64_t step) {
  std::multiset<std::int64_t> samples;
  for (int rank = 0; rank < world; ++rank) {
    DistributedSampler sampler(micro, accum, world, rank);
    for (std::int64_t m = 0; m < accum; ++m) {
      const SampleRange range = sampler.micro_batch(step, m);
      for (std::int64_t i = 0; i < range.count; ++i) samples.insert(range.first + i);
    }
  }
  return samples;
}

TEST(DistributedSampler, GlobalBatchIsTheSameAtEveryWorldSize) {
  const auto reference = global_batch(8, 1, 1, 3);
  EXPECT_EQ(global_batch(4, 1, 2, 3), reference);
  EXPECT_EQ(global_batch(2, 2, 2, 3), reference);
  EXPECT_EQ(global_batch(1, 2, 4, 3), reference);
  EXPECT_EQ(*reference.begin(), 24);
  EXPECT_EQ(reference.size(), 8u);
}

TEST(DistributedSampler, RanksNeverShareASample) {
  const auto samples = global_batch(3, 2, 3, 5);
  EXPECT_EQ(std::set<std::int64_t>(samples.begin(), samples.end()).size(), samples.size());
}

TEST(EvenShare, CoversEverySampleOnceInRankOrderWithSharesOneApart) {
  for (const std::int64_t samples : {0, 1, 2, 7, 9, 64}) {
    for (const int world : {1, 2, 3, 4}) {
      std::int64_t next = 0;
      for (int rank = 0; rank < world; ++rank) {
        const SampleRange share = even_share(samples, world, rank);
        EXPECT_EQ(share.first, next) << samples << " over " << world << ", rank " << rank;
        EXPECT_EQ(share.count, samples / world + (rank < samples % world ? 1 : 0))
            << samples << " over " << world << ", rank " << rank;
        next = share.first + share.count;
      }
      EXPECT_EQ(next, samples) << samples << " over " << world;
    }
  }
}

TEST(SyntheticClassification, SamplesArePureFunctionsOfSeedAndIndex) {
  SyntheticClassification a(7, 16, 5);
  SyntheticClassification b(7, 16, 5);
  SyntheticClassification other(8, 16, 5);
  std::vector<float> xa(16), xb(16), xc(16);
  EXPECT_EQ(a.sample(123, xa), b.sample(123, xb));
  EXPECT_EQ(xa, xb);
  other.sample(123, xc);
  EXPECT_NE(xa, xc);
}

TEST(SyntheticClassification, UsesEveryClass) {
  SyntheticClassification task(1, 8, 4);
  std::vector<int> counts(4, 0);
  std::vector<float> x(8);
  for (int i = 0; i < 400; ++i) counts[static_cast<std::size_t>(task.sample(i, x))]++;
  for (int c : counts) EXPECT_GT(c, 40);
}

TEST(SyntheticClassificationSource, LoadsTheRequestedRange) {
  MemoryTracker tracker(Device::cpu());
  auto source = make_synthetic_classification_source(3, 8, 4);
  const Batch batch = source->load({10, 5}, tracker);
  EXPECT_EQ(batch.inputs.shape(), (Shape{5, 8}));
  EXPECT_EQ(batch.targets.shape(), (Shape{5}));
  SyntheticClassification task(3, 8, 4);
  std::vector<float> x(8);
  EXPECT_EQ(batch.targets.data_as<std::int32_t>()[2], task.sample(12, x));
  EXPECT_EQ(batch.inputs.data_as<float>()[16], x[0]);
}

}  // namespace
}  // namespace zt::data
