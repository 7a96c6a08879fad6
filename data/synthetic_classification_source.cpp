// BatchSource over the synthetic classification task.
#include "data/batch.h"
#include "data/synthetic_classification.h"

namespace zt::data {
namespace {

class SyntheticClassificationSource final : public BatchSource {
 public:
  SyntheticClassificationSource(std::uint64_t seed, std::int64_t input_dim,
                                std::int64_t num_classes)
      : task_(seed, input_dim, num_classes) {}

  Batch load(SampleRange range, MemoryTracker& tracker) const override {
    Batch batch;
    batch.samples = range.count;
    batch.inputs = Tensor::zeros(Shape{range.count, task_.input_dim()}, DType::kF32, tracker,
                                 MemoryCategory::kActivations);
    batch.targets =
        Tensor::zeros(Shape{range.count}, DType::kI32, tracker, MemoryCategory::kActivations);
    const auto dim = static_cast<std::size_t>(task_.input_dim());
    float* x = batch.inputs.data_as<float>();
    std::int32_t* y = batch.targets.data_as<std::int32_t>();
    for (std::int64_t i = 0; i < range.count; ++i) {
      y[i] = task_.sample(range.first + i, {x + static_cast<std::size_t>(i) * dim, dim});
    }
    return batch;
  }

 private:
  SyntheticClassification task_;
};

}  // namespace

std::unique_ptr<BatchSource> make_synthetic_classification_source(std::uint64_t seed,
                                                                  std::int64_t input_dim,
                                                                  std::int64_t num_classes) {
  return std::make_unique<SyntheticClassificationSource>(seed, input_dim, num_classes);
}

}  // namespace zt::data
