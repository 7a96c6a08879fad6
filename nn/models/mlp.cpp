// Builds the two-block MLP.
#include "nn/models/mlp.h"

#include "nn/layers/linear.h"
#include "nn/layers/relu.h"
#include "nn/layers/sequential.h"

namespace zt::nn {

Model make_mlp(const MlpShape& shape) {
  Model model("mlp");
  auto hidden = std::make_unique<Sequential>();
  hidden->add(std::make_unique<Linear>("fc1", shape.input_dim, shape.hidden_dim, true));
  hidden->add(std::make_unique<Relu>());
  model.add_block("hidden", std::move(hidden));
  model.add_block("head",
                  std::make_unique<Linear>("fc2", shape.hidden_dim, shape.num_classes, true));
  return model;
}

}  // namespace zt::nn
