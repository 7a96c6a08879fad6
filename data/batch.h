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

std::unique_ptr<BatchSource> make_synthetic_classification_source(std::uint64_t seed,
                                                                  std::int64_t input_dim,
                                                                  std::int64_t num_classes);

}  // namespace zt::data
