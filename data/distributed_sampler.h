// The distributed sampler: which samples each rank reads. The global batch of a step is the
// same contiguous range of sample indices at every world size; rank r's micro-batch m is a
// slice of it, so 2 ranks × b equals 1 rank × 2b sample for sample. A fixed set that does not
// follow the batch (the validation windows) is split by even_share.
#pragma once

#include <cstdint>

namespace zt::data {

struct SampleRange {
  std::int64_t first = 0;
  std::int64_t count = 0;
};

// Rank `rank`'s contiguous share of samples [0, samples) split over `world_size` ranks as
// evenly as they go: the first (samples mod world_size) ranks take one more. The shares
// cover the range once, in rank order; a rank's is empty when samples < world_size.
SampleRange even_share(std::int64_t samples, int world_size, int rank);

class DistributedSampler {
 public:
  DistributedSampler(std::int64_t micro_batch_size, std::int64_t grad_accum_steps, int world_size,
                     int rank);

  std::int64_t global_batch_size() const {
    return micro_batch_size_ * grad_accum_steps_ * world_size_;
  }

  // Samples of this rank's `micro_batch` (0-based, < grad_accum_steps) at `step` (0-based).
  // Global batch g covers [g·G, (g+1)·G); within it micro-batch m is the m-th slice of
  // world_size·b samples, and rank r takes the r-th b of those.
  SampleRange micro_batch(std::int64_t step, std::int64_t micro_batch) const;

 private:
  std::int64_t micro_batch_size_;
  std::int64_t grad_accum_steps_;
  std::int64_t world_size_;
  std::int64_t rank_;
};

}  // namespace zt::data
