// A micro-batch as the model consumes it, and the sources that produce one for a range of
// sample indices (synthetic data, token files).
#pragma once

#include <cstdint>
#include <memory>

#include "core/memory_tracker.h"
#include "core/tensor.h"
#include "data/distributed_sampler.h"

namespace zt::data {

struct Batch {
  Tensor inputs;   // MLP: (b, input_dim) f32
  Tensor targets;  // MLP: (b) i32 labels
  std::int64_t samples = 0;
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // The samples of `range`, allocated from `tracker` as activations.
  virtual Batch load(SampleRange range, MemoryTracker& tracker) const = 0;
};

// Note [Held-out synthetic stream]
// Synthetic samples are pure functions of (seed, index), so samples from index 2^62 on are
// a held-out stream of the same distribution that training never reads (it would take 2^62
// samples to get there): the synthetic data's validation set.
inline constexpr std::int64_t kHeldOutFirstSample = std::int64_t{1} << 62;

// Sample i of the result is sample first_sample + i of `source`.
std::unique_ptr<BatchSource> make_shifted_source(std::unique_ptr<BatchSource> source,
                                                 std::int64_t first_sample);

std::unique_ptr<BatchSource> make_synthetic_classification_source(std::uint64_t seed,
                                                                  std::int64_t input_dim,
                                                                  std::int64_t num_classes);

}  // namespace zt::data
