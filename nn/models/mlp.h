// The MLP classifier: block "hidden" = Linear(input, hidden) + ReLU, block "head" =
// Linear(hidden, classes); trained with softmax cross-entropy.
#pragma once

#include <cstdint>

#include "nn/model.h"

namespace zt::nn {

struct MlpShape {
  std::int64_t input_dim = 0;
  std::int64_t hidden_dim = 0;
  std::int64_t num_classes = 0;
};

Model make_mlp(const MlpShape& shape);

}  // namespace zt::nn
