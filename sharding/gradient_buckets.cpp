// Bucket ranges and readiness.
#include "sharding/gradient_buckets.h"

#include <algorithm>

#include "core/error.h"

namespace zt::zero {

GradientBuckets::GradientBuckets(std::int64_t total_elements, std::int64_t bucket_elements) {
  ZT_CHECK(bucket_elements > 0, "bucket size must be positive");
  for (std::int64_t end = total_elements; end > 0; end -= bucket_elements) {
    const std::int64_t begin = std::max<std::int64_t>(0, end - bucket_elements);
    buckets_.push_back({begin, end - begin});
  }
}

std::vector<Bucket> GradientBuckets::take_ready(std::int64_t ready_from) {
  std::vector<Bucket> ready;
  while (next_ < buckets_.size() && buckets_[next_].offset >= ready_from) {
    ready.push_back(buckets_[next_++]);
  }
  return ready;
}

}  // namespace zt::zero
