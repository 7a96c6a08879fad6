// Bucket ranges and readiness.
#include "sharding/gradient_buckets.h"

#include <algorithm>

#include "core/error.h"

namespace zt::zero {

GradientBuckets::GradientBuckets(std::int64_t total_elements, std::int64_t bucket_elements)
    : total_elements_(total_elements), bucket_elements_(bucket_elements) {
  ZT_CHECK(bucket_elements > 0, "bucket size must be positive");
  ZT_CHECK(total_elements >= 0, "negative gradient buffer");
  count_ = total_elements / bucket_elements + (total_elements % bucket_elements != 0 ? 1 : 0);
}

Bucket GradientBuckets::bucket(std::int64_t index) const {
  ZT_CHECK(index >= 0 && index < count_, "bucket " + std::to_string(index) + " out of range");
  const std::int64_t end = total_elements_ - index * bucket_elements_;
  const std::int64_t begin = std::max<std::int64_t>(0, end - bucket_elements_);
  return {begin, end - begin};
}

std::vector<Bucket> GradientBuckets::take_ready(std::int64_t ready_from) {
  std::vector<Bucket> ready;
  while (next_ < count_ && bucket(next_).offset >= ready_from) ready.push_back(bucket(next_++));
  return ready;
}

}  // namespace zt::zero
