// ModelWeights: a model's full parameters on one device in the compute dtype, for inference
// (generation): read from a checkpoint saved at any world size and ZeRO stage, or given.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/device/device_context.h"
#include "core/tensor.h"
#include "nn/model.h"
#include "runtime/checkpoint/checkpoint_reader.h"
#include "sharding/flat_layout.h"

namespace zt::generate {

class ModelWeights {
 public:
  // `values`: the model's real parameters (FlatLayout numel, f32, host) in layout order, as
  // the checkpoint's masters and unpadded_parameters hold them; rounded once into `dtype`.
  ModelWeights(const nn::Model& model, std::span<const float> values, DType dtype,
               DeviceContext& device);
  // The masters of `reader`'s checkpoint, after checking that it was saved from `model`:
  // Error naming the checkpoint, the first parameter that differs and `config_path`.
  static ModelWeights from_checkpoint(const nn::Model& model,
                                      const checkpoint::CheckpointReader& reader, DType dtype,
                                      DeviceContext& device, const std::string& config_path);

  // The parameters of block `block`, as its module's forward takes them.
  const std::vector<Tensor>& block(std::size_t block) const { return views_.at(block); }

 private:
  zero::FlatLayout layout_;
  Tensor flat_;                             // padded_numel in the compute dtype, on the device
  std::vector<std::vector<Tensor>> views_;  // per block
};

}  // namespace zt::generate
