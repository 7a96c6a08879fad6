// Synthetic classification samples from counter-based random numbers.
#include "data/synthetic_classification.h"

#include "core/error.h"
#include "core/random.h"

namespace zt::data {

SyntheticClassification::SyntheticClassification(std::uint64_t seed, std::int64_t input_dim,
                                                 std::int64_t num_classes)
    : feature_key_(random_key(seed, 0xFEA7u)),
      teacher_key_(random_key(seed, 0x7EAC4u)),
      input_dim_(input_dim),
      num_classes_(num_classes) {
  ZT_CHECK(input_dim > 0 && num_classes > 1, "synthetic task needs input_dim > 0, classes > 1");
}

std::int32_t SyntheticClassification::sample(std::int64_t index, std::span<float> features) const {
  ZT_CHECK(static_cast<std::int64_t>(features.size()) == input_dim_, "feature span size");
  const std::uint64_t row_key = random_key(feature_key_, static_cast<std::uint64_t>(index));
  for (std::int64_t j = 0; j < input_dim_; ++j) {
    features[static_cast<std::size_t>(j)] = standard_normal(row_key, static_cast<std::uint64_t>(j));
  }
  std::int32_t best = 0;
  float best_score = 0.0f;
  for (std::int64_t c = 0; c < num_classes_; ++c) {
    float score = 0.0f;
    for (std::int64_t j = 0; j < input_dim_; ++j) {
      const auto weight_index = static_cast<std::uint64_t>(c * input_dim_ + j);
      score += standard_normal(teacher_key_, weight_index) * features[static_cast<std::size_t>(j)];
    }
    if (c == 0 || score > best_score) {
      best = static_cast<std::int32_t>(c);
      best_score = score;
    }
  }
  return best;
}

}  // namespace zt::data
