// Gradient buckets for DDP: fixed-size ranges of the flat gradient buffer taken from its end,
// because backward produces the last block's gradients first. A bucket is ready once every
// block it overlaps has finished backward; the order is the same on every rank. Buckets are
// computed from their index, not stored: a model of any size costs a few integers here.
#pragma once

#include <cstdint>
#include <vector>

namespace zt::zero {

struct Bucket {
  std::int64_t offset = 0;  // elements
  std::int64_t numel = 0;
};

class GradientBuckets {
 public:
  // Buckets of at most `bucket_elements` covering [0, total_elements), last range first.
  GradientBuckets(std::int64_t total_elements, std::int64_t bucket_elements);

  std::int64_t size() const { return count_; }
  // Bucket `index` in launch order (0 is the buffer's last range).
  Bucket bucket(std::int64_t index) const;

  // Called when the gradients at [ready_from, total) are all final (a block at ready_from
  // finished its backward). Returns the buckets that became ready, in launch order.
  std::vector<Bucket> take_ready(std::int64_t ready_from);
  // Whether every bucket has been taken since reset().
  bool all_taken() const { return next_ == count_; }
  void reset() { next_ = 0; }

 private:
  std::int64_t total_elements_;
  std::int64_t bucket_elements_;
  std::int64_t count_;     // ceil(total_elements / bucket_elements)
  std::int64_t next_ = 0;  // first bucket not yet taken
};

}  // namespace zt::zero
