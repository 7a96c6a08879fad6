// Loading full weights: the checkpoint's masters gathered by model element (whatever the
// saving run's world size and stage), checked against the model, cast and copied to the device.
#include "runtime/generate/model_weights.h"

#include "core/error.h"
#include "runtime/checkpoint/checkpoint_format.h"
#include "sharding/compute_dtype.h"
#include "sharding/state_shard.h"

namespace zt::generate {
namespace {

std::string describe(const checkpoint::ManifestParameter& p) {
  return p.name + " " + p.shape_text() + (p.tied_to.empty() ? "" : " tied to " + p.tied_to);
}

void check_saved_from(const nn::Model& model, const zero::FlatLayout& layout,
                      const checkpoint::CheckpointReader& reader, const std::string& config_path) {
  const std::vector<checkpoint::ManifestParameter> ours = checkpoint::describe_parameters(layout);
  const std::vector<checkpoint::ManifestParameter>& theirs = reader.manifest().parameters;
  const std::string where = "checkpoint '" + reader.path().string() + "' was saved from another " +
                            "model than " + config_path + "'s " + model.name();
  const std::string hint = " (the checkpoint's own config is in its manifest.toml)";
  if (theirs.size() != ours.size()) {
    throw Error(where + ": it has " + std::to_string(theirs.size()) + " parameters, the config's " +
                std::to_string(ours.size()) + hint);
  }
  for (std::size_t i = 0; i < ours.size(); ++i) {
    if (!(theirs[i] == ours[i])) {
      throw Error(where + ": its parameter " + std::to_string(i) + " is " + describe(theirs[i]) +
                  ", the config's is " + describe(ours[i]) + hint);
    }
  }
}

}  // namespace

ModelWeights::ModelWeights(const nn::Model& model, std::span<const float> values, DType dtype,
                           DeviceContext& device)
    : layout_(zero::make_flat_layout(model, 1)) {
  ZT_CHECK(static_cast<std::int64_t>(values.size()) == layout_.numel,
           "ModelWeights given " + std::to_string(values.size()) + " values for " +
               std::to_string(layout_.numel) + " parameters");
  // The values are in the unpadded order; each run of them goes to its aligned place.
  MemoryTracker& tracker = device.tracker();
  const Tensor host_f32 =
      Tensor::wrap(const_cast<float*>(values.data()), Shape{layout_.numel}, DType::kF32);
  const Tensor master =
      Tensor::zeros(Shape{layout_.padded_numel}, DType::kF32, tracker, MemoryCategory::kParameters);
  std::vector<zero::StateRun> runs;
  zero::append_state_runs(layout_, 0, layout_.padded_numel, 0, runs);
  for (const zero::StateRun& run : runs) {
    device.ops().copy(host_f32.view(run.begin, Shape{run.count}),
                      master.view(run.shard_offset, Shape{run.count}));
  }
  flat_ = dtype == DType::kF32
              ? master
              : Tensor::empty(master.shape(), dtype, tracker, MemoryCategory::kParameters);
  zero::copy_master_to_compute(device.ops(), master, flat_);
  device.synchronize();
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    views_.push_back(zero::block_views(layout_, b, flat_));
  }
}

ModelWeights ModelWeights::from_checkpoint(const nn::Model& model,
                                           const checkpoint::CheckpointReader& reader, DType dtype,
                                           DeviceContext& device, const std::string& config_path) {
  const zero::FlatLayout layout = zero::make_flat_layout(model, 1);
  check_saved_from(model, layout, reader, config_path);
  reader.verify();  // every file against its checksum, as an export does
  std::vector<float> values(static_cast<std::size_t>(layout.numel));
  reader.read(0, 0, layout.numel, values.data());
  return ModelWeights(model, values, dtype, device);
}

}  // namespace zt::generate
