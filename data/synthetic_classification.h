// A deterministic synthetic classification task for the MLP: inputs x ~ N(0, I) and the
// label argmax(W_t x) of a fixed random linear teacher, so a model can learn it exactly.
// Sample i is a pure function of (seed, i): identical at every world size.
#pragma once

#include <cstdint>
#include <span>

namespace zt::data {

class SyntheticClassification {
 public:
  SyntheticClassification(std::uint64_t seed, std::int64_t input_dim, std::int64_t num_classes);

  std::int64_t input_dim() const { return input_dim_; }
  std::int64_t num_classes() const { return num_classes_; }

  // Writes sample `index`'s features (input_dim) and returns its label.
  std::int32_t sample(std::int64_t index, std::span<float> features) const;

 private:
  std::uint64_t feature_key_;
  std::uint64_t teacher_key_;
  std::int64_t input_dim_;
  std::int64_t num_classes_;
};

}  // namespace zt::data
