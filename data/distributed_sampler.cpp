// Sample ranges of the distributed sampler.
#include "data/distributed_sampler.h"

#include <algorithm>

#include "core/error.h"

namespace zt::data {

SampleRange even_share(std::int64_t samples, int world_size, int rank) {
  ZT_CHECK(samples >= 0 && world_size > 0 && rank >= 0 && rank < world_size, "share sizes");
  const std::int64_t base = samples / world_size;
  const std::int64_t extra = samples % world_size;
  return {rank * base + std::min<std::int64_t>(rank, extra), base + (rank < extra ? 1 : 0)};
}

DistributedSampler::DistributedSampler(std::int64_t micro_batch_size, std::int64_t grad_accum_steps,
                                       int world_size, int rank)
    : micro_batch_size_(micro_batch_size),
      grad_accum_steps_(grad_accum_steps),
      world_size_(world_size),
      rank_(rank) {
  ZT_CHECK(micro_batch_size > 0 && grad_accum_steps > 0 && world_size > 0, "sampler sizes");
  ZT_CHECK(rank >= 0 && rank < world_size, "sampler rank out of range");
}

SampleRange DistributedSampler::micro_batch(std::int64_t step, std::int64_t micro_batch) const {
  ZT_CHECK(micro_batch >= 0 && micro_batch < grad_accum_steps_, "micro-batch index out of range");
  const std::int64_t first =
      step * global_batch_size() + (micro_batch * world_size_ + rank_) * micro_batch_size_;
  return {first, micro_batch_size_};
}

}  // namespace zt::data
