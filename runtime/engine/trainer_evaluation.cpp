// Evaluation: the validation loss train.eval_every logs (and `zerotrain eval` prints), the
// loss and outputs of a caller's batch, all from forwards that keep nothing for a backward
// (Note [Evaluation memory] in block_pass.cpp) and change nothing.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/distributed_sampler.h"
#include "runtime/engine/block_pass.h"
#include "runtime/engine/trainer.h"
#include "sharding/host_transfer.h"

namespace zt::engine {

std::array<double, 2> Trainer::evaluation_loss(
    const data::Batch& batch, double global_targets,
    const std::function<void(const Tensor&)>& on_output) {
  nn::LossResult loss;
  try {
    loss = forward_loss(batch, static_cast<float>(1.0 / global_targets), steps_done_, 0, false,
                        on_output);
  } catch (...) {
    pass_->discard_forward();
    strategy_->end_forward_only();
    throw;
  }
  strategy_->end_forward_only();
  return {loss.loss_sum, static_cast<double>(loss.rows)};
}

double Trainer::evaluate(const data::Batch& batch) {
  check_batch(batch, 0, "evaluate(batch)");
  const std::string phase = tracker_.phase();
  const double global_targets =
      static_cast<double>(batch.targets.numel()) * static_cast<double>(comm_.world_size());
  const std::array<double, 2> loss = evaluation_loss(batch, global_targets);
  tracker_.set_phase(phase);
  return global_mean_loss(loss[0], static_cast<std::int64_t>(loss[1]));
}

std::vector<float> Trainer::forward_logits(const Tensor& inputs) {
  if (!inputs.defined() || inputs.rank() == 0) {
    throw Error("forward_logits(inputs): the inputs need a sample axis first; got " +
                (inputs.defined() ? inputs.shape().to_string() : std::string("(none)")));
  }
  model_.block(0).module->check_input(inputs);
  const std::string phase = tracker_.phase();
  tracker_.set_phase("evaluation data");
  Tensor output;
  try {
    output = pass_->forward_only(device_inputs(inputs));
  } catch (...) {
    pass_->discard_forward();
    strategy_->end_forward_only();
    throw;
  }
  strategy_->end_forward_only();
  std::vector<float> logits = host_f32(output);
  tracker_.set_phase(phase);
  return logits;
}

std::vector<float> Trainer::host_f32(const Tensor& output) {
  const std::string phase = tracker_.phase();
  tracker_.set_phase("evaluation output");
  Tensor values = output;
  if (values.dtype() != DType::kF32) {
    values = Tensor::empty(output.shape(), DType::kF32, tracker_, MemoryCategory::kActivations);
    device_.ops().cast(output, values);
  }
  std::vector<float> host(static_cast<std::size_t>(values.numel()));
  zero::read_to_host(device_, values, host);
  tracker_.set_phase(phase);
  return host;
}

bool Trainer::evaluates_after(std::int64_t step) const {
  const std::int64_t every = config_.train.eval_every;
  return every > 0 && (step % every == 0 || step == config_.train.steps);
}

// Note [Validation samples]
// The validation set is samples [0, train.eval_windows) of the validation source whatever
// the world size, micro-batch size and accumulation, so every split of a job measures the
// same val_loss up to float summation order: each rank takes its even_share of the windows
// and evaluates it in micro-batches of at most micro_batch_size (the last one short, so
// evaluation's activations never outgrow training's, Note [Evaluation memory]); the loss
// sums and token counts then go over the ranks in one all-reduce, so val_loss is the mean
// over all windows' tokens, not a mean of the ranks' means. Shares differ by at most one
// window, and so by at most one micro-batch; a forward is collective at stage 3 (each
// block is gathered), so every rank runs as many forwards as rank 0 (the largest share), a
// rank whose share has run out evaluating window 0 as a stand-in whose loss it does not
// count. The same windows every time, whatever step it is, so val_loss moves only with
// the weights, and a resumed run measures what the uninterrupted one did.
double Trainer::validation_loss(const ValidationOutputSink& on_outputs) {
  if (!validation_) {
    throw Error(
        "validation_loss: this trainer has no validation source (TrainingParts::validation)");
  }
  const std::string phase = tracker_.phase();
  const std::int64_t windows = config_.train.eval_windows;
  const std::int64_t micro_batch_size = config_.train.micro_batch_size;
  const data::SampleRange share = data::even_share(windows, comm_.world_size(), comm_.rank());
  const std::int64_t forwards =
      (data::even_share(windows, comm_.world_size(), 0).count + micro_batch_size - 1) /
      micro_batch_size;
  double loss_sum = 0.0;
  double rows = 0.0;
  for (std::int64_t micro = 0; micro < forwards; ++micro) {
    const std::int64_t offset = micro * micro_batch_size;
    const bool stand_in = offset >= share.count;
    const data::SampleRange range =
        stand_in ? data::SampleRange{0, 1}
                 : data::SampleRange{share.first + offset,
                                     std::min(micro_batch_size, share.count - offset)};
    tracker_.set_phase("evaluation data");
    data::Batch batch;
    {
      const ScopedAllocationName name("validation batch");
      batch = validation_->load(range, batch_tracker());
    }
    check_batch(batch, range.count, "the validation source's batch");
    const double global_targets = static_cast<double>(batch.targets.numel()) *
                                  static_cast<double>(windows) / static_cast<double>(batch.samples);
    std::function<void(const Tensor&)> on_output;
    if (on_outputs && !stand_in) {
      on_output = [&](const Tensor& output) {
        const std::vector<float> values = host_f32(output);
        std::vector<std::int64_t> window_shape;
        for (int axis = 1; axis < output.rank(); ++axis) window_shape.push_back(output.dim(axis));
        on_outputs({range.first, range.count, std::move(window_shape), values});
      };
    }
    const std::array<double, 2> loss = evaluation_loss(batch, global_targets, on_output);
    if (stand_in) continue;
    loss_sum += loss[0];
    rows += loss[1];
  }
  const std::array<float, 2> global = all_reduce_pair(
      {static_cast<float>(loss_sum), static_cast<float>(rows)}, comm::ReduceOp::kSum);
  tracker_.set_phase(phase);
  return static_cast<double>(global[0]) / static_cast<double>(global[1]);
}

}  // namespace zt::engine
