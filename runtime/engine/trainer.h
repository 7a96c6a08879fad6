// Trainer: the training loop of one rank. Micro-batches, gradient accumulation, the ZeRO
// strategy's hooks around each block, the optimizer step, metrics and progress.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "comm/comm_lanes.h"
#include "comm/communicator.h"
#include "core/config/batch_size.h"
#include "core/config/config.h"
#include "core/device/device_context.h"
#include "core/device/host_scalar.h"
#include "core/memory_tracker.h"
#include "data/batch.h"
#include "nn/kernels/kernel_backend.h"
#include "nn/loss/loss.h"
#include "nn/model.h"
#include "optim/loss_scaler.h"
#include "optim/optimizer.h"
#include "runtime/engine/batch_upload.h"
#include "runtime/engine/fault_injection.h"
#include "runtime/engine/metrics_log.h"
#include "runtime/engine/run_directory.h"
#include "runtime/engine/sharded_decoder.h"
#include "runtime/engine/supported_config.h"
#include "runtime/engine/validation_outputs.h"
#include "sharding/zero_strategy.h"

namespace zt::checkpoint {
class Checkpointer;
struct TrainerState;
}  // namespace zt::checkpoint

namespace zt::engine {

class BlockPass;
class ProgressLine;
class TrainingSample;

// What a run trains: the model, where its batches come from and what it minimizes. The CLI
// builds them from the config (training_parts_from_config); library users bring their own.
struct TrainingParts {
  nn::Model model{"model"};
  // Batches for run(); may be null when the caller feeds every step through step(batch).
  std::unique_ptr<data::BatchSource> source;
  // Validation samples for train.eval_every (sample i the same at every evaluation); may be
  // null when train.eval_every = 0.
  std::unique_ptr<data::BatchSource> validation;
  std::unique_ptr<nn::Loss> loss;  // null: softmax cross-entropy
  // The targets are tokens, so metrics report tokens/s (a language model); otherwise
  // tokens_per_s is NaN (null in metrics.jsonl) and samples_per_s is the throughput.
  bool targets_are_tokens = false;
};

TrainingParts training_parts_from_config(const Config& config);

struct TrainerOptions {
  bool write_run_dir = true;  // rank 0 writes metrics.jsonl and config.toml under run.dir
  // run.dir as the caller already claimed it (run_training does, before connecting); when
  // null and write_run_dir is set, run() claims it itself.
  const RunDirectory* run_directory = nullptr;
  bool show_progress = true;  // rank 0 prints the progress line
  // checkpoint.resume loads weights to measure, not to train on (zerotrain eval): a
  // checkpoint of any global batch loads (Checkpointer's weights_only).
  bool resume_weights_only = false;
  std::optional<FaultPlan> fault;  // deliberate failures for tests (ZEROTRAIN_FAULT)
  // Called on every rank after each optimizer step (run() and step()), with the step's
  // metrics: logging, evaluation (Trainer::evaluate is collective: call it on every rank).
  std::function<void(const StepMetrics&)> on_step;
  // Called on every rank once each optimizer step's update is done, inside the step's time
  // (RankSession::check_collectives_step: comm.check_collectives = "step"). Collective.
  std::function<void()> end_of_step;
};

// Options for a run that writes nothing and prints nothing (tests, benchmarks).
inline TrainerOptions quiet_trainer_options() {
  TrainerOptions options;
  options.write_run_dir = false;
  options.show_progress = false;
  return options;
}

struct TrainResult {
  std::vector<double> losses;  // the global mean loss of every step
  std::vector<StepMetrics> metrics;
  MemorySnapshot memory_after_first_step;  // the tracker at the end of step 1 (memory.json)
};

class Trainer {
 public:
  // Trains `parts` as the config says (stage, precision, accumulation, optimizer, schedule).
  // Validates what this build can run (throws ConfigError) and the model (Error for one
  // without blocks or parameters), then builds the strategy.
  // Each lane is its own ordered queue: the loss and norm reductions (control) never wait
  // behind parameter all-gathers or gradient reductions.
  // Everything lives on `device` (its tracker counts every byte).
  Trainer(const Config& config, TrainingParts parts, comm::CommLanes lanes, DeviceContext& device,
          TrainerOptions options = {});
  // The model and data the config describes.
  Trainer(const Config& config, comm::CommLanes lanes, DeviceContext& device,
          TrainerOptions options = {});
  // On the CPU, counting into `tracker` (which the caller reads after the run).
  Trainer(const Config& config, comm::CommLanes lanes, MemoryTracker& tracker,
          TrainerOptions options = {});
  // Every lane is `comm`: correct, but nothing overlaps across kinds of traffic.
  Trainer(const Config& config, comm::Communicator& comm, MemoryTracker& tracker,
          TrainerOptions options = {});
  ~Trainer();

  // Trains from the step after the last one made to train.steps, loading batches from the
  // parts' source (Error when it has none).
  TrainResult run();
  // One optimizer step on `batch`: this rank's share of the global batch, micro_batch_size ×
  // grad_accum_steps samples along the first axis of inputs and targets (Error naming the
  // shapes otherwise). Collective: every rank calls it with its own share.
  StepMetrics step(const data::Batch& batch);
  // This rank's share of global batch `step` (from 1) from `source`, exactly as run() loads
  // it: its micro-batches one after another, in batch_tracker() memory. For callers that own
  // the loop and want run()'s data order.
  data::Batch load_step_batch(const data::BatchSource& source, std::int64_t step);
  // The global mean loss on `batch` (any number of samples on each rank) without changing
  // the model: a forward that keeps nothing for a backward. Collective.
  double evaluate(const data::Batch& batch);
  // The validation loss train.eval_every reports: the global mean loss over the first
  // train.eval_windows samples of the parts' validation source, split over the ranks; the
  // same samples every time and at every batch split (Note [Validation samples]).
  // Collective; Error without a source. `on_outputs`, when set, also sees the model's outputs
  // of this rank's windows (not the stand-ins'), one micro-batch at a time, before their loss.
  double validation_loss(const ValidationOutputSink& on_outputs = {});
  // The model's output for `inputs` (this rank's samples, any number: for a language model
  // token ids (B, T) and logits (B, T, V)), from a forward that keeps nothing for a backward
  // and changes nothing, as evaluate's. Row-major f32 on the host, widened from the compute
  // dtype. Collective (stage 3 gathers each block's parameters): call it on every rank.
  std::vector<float> forward_logits(const Tensor& inputs);
  std::int64_t steps_done() const { return steps_done_; }
  // Saves a checkpoint of the state after steps_done() into checkpoint.dir and commits it
  // before returning, whatever checkpoint.every_steps says. Collective. Returns its path.
  std::filesystem::path save_checkpoint();
  // The step training resumed after (checkpoint.resume), 0 when it started fresh.
  std::int64_t resumed_step() const { return resumed_step_; }
  // Where a caller's batches for step() and evaluate() are allocated: host memory that batch
  // sources can write (the device's tracker on the CPU; a host tracker of the trainer's,
  // counted as activations, on an accelerator, whose batches are copied over).
  MemoryTracker& batch_tracker() { return host_batches_ ? *host_batches_ : tracker_; }
  zero::ZeroStrategy& strategy() { return *strategy_; }
  // The model as this rank holds it under the strategy, for decoding (ShardedDecoder).
  ShardedModel sharded_model() { return {model_, *strategy_, device_, *kernels_, comm_}; }
  const Config& config() const { return config_; }
  // The device tracker now, with host_offload from the offloaded optimizer's host tracker.
  MemorySnapshot memory_snapshot() const;
  // The tracker at the end of step 1 (memory.json's "after_first_step"); empty before it.
  const MemorySnapshot& memory_after_first_step() const { return memory_after_first_step_; }
  const nn::Model& model() const { return model_; }
  // The resolved batch sizes and what was inferred (for the run log).
  const BatchSizes& batch_sizes() const { return batch_sizes_; }

 private:
  Trainer(const Config& config, TrainingParts parts, comm::CommLanes lanes,
          std::unique_ptr<DeviceContext> owned_device, TrainerOptions options);
  Trainer(const Config& config, TrainingParts parts, comm::CommLanes lanes, DeviceContext& device,
          std::unique_ptr<DeviceContext>&& owned_device, TrainerOptions options);
  void open_run_directory();  // rank 0, once: config.toml, run_id and metrics.jsonl
  // Rank 0 writing run.dir: keeps the checkpointer's run id in run.dir/run_id.
  void record_run_id();

  // One optimizer step from micro-batches that `load_micro` returns (by index); the
  // metrics of the step, also handed to the log, the progress line and on_step.
  StepMetrics run_step(const std::function<data::Batch(std::int64_t micro)>& load_micro);
  // Shapes and sample count (Error naming `what`), then the first block's check of the inputs
  // (FormatError: a token id outside the vocabulary, naming its batch row and position).
  void check_batch(const data::Batch& batch, std::int64_t samples, const char* what) const;
  // Unscales, clips and applies the step's gradients unless they overflowed; returns the
  // (unscaled) global gradient norm and sets `skipped`.
  // Throws when the global gradient norm squared is not finite (and no loss scaler skips).
  void check_gradients_finite(std::int64_t step, double norm_squared) const;
  // Given the step's global gradient norm squared (of the scaled gradients).
  double apply_gradients(std::int64_t step, float lr, double norm_squared, bool& skipped);
  // Forward, loss and backward of one micro-batch; returns its loss sum, which the device
  // may still be writing (Note [One host wait per step]).
  HostScalar micro_batch(std::int64_t step, std::int64_t micro, data::Batch batch);
  // After one wait: the step's micro-batch loss sums added in order; Error naming the first
  // non-finite one.
  double read_loss_sums(std::int64_t step);
  void check_loss_finite(double loss_sum, std::int64_t step, std::int64_t micro) const;
  // `inputs` on the device, floating ones in the compute dtype.
  Tensor device_inputs(const Tensor& inputs);
  // The loss of `batch`'s forward as the loss computes it (backward not run). With
  // `for_backward` false the forward keeps nothing (evaluation; the caller ends it).
  // `on_output`, when set, sees the model's output before the loss is computed.
  nn::LossResult forward_loss(const data::Batch& batch, float grad_scale, std::int64_t step,
                              std::int64_t micro, bool for_backward = true,
                              const std::function<void(const Tensor&)>& on_output = {});
  // The dropout masks of this rank's micro-batch `micro` at `step` (Note [Dropout masks from
  // a hash]): its first sample's index in the global batch, as the sampler places it.
  nn::DropoutDraw dropout_draw(std::int64_t step, std::int64_t micro) const;
  // The summed loss and rows of `batch` on this rank, with a forward that keeps nothing.
  std::array<double, 2> evaluation_loss(const data::Batch& batch, double global_targets,
                                        const std::function<void(const Tensor&)>& on_output = {});
  // `output` (on the device, any float dtype) widened to f32 in host memory, row-major.
  std::vector<float> host_f32(const Tensor& output);
  bool evaluates_after(std::int64_t step) const;
  data::Batch load_from_source(std::int64_t step, std::int64_t micro);
  double global_mean_loss(double local_loss_sum, std::int64_t local_rows);
  // A copy of host tensor `host` on the device, counted as activations.
  Tensor on_device(const Tensor& host);
  // Collective on the control lane: two floats reduced over the ranks (the loss sum and
  // rows; the checkpoint's agreement flags), through the loss buffer.
  std::array<float, 2> all_reduce_pair(std::array<float, 2> values, comm::ReduceOp op);
  // `values` (at most the loss buffer's size) reduced over the ranks in place.
  void all_reduce_floats(std::span<float> values, comm::ReduceOp op);
  checkpoint::TrainerState trainer_state() const;
  void make_checkpointer();
  void restore(const checkpoint::TrainerState& state);

  const BatchSizes batch_sizes_;  // resolved once, before config_ copies them in
  const Config config_;           // as given, with the batch sizes resolved
  comm::CommLanes lanes_;
  comm::Communicator& comm_;  // the control lane: loss reduction, rank and world size
  std::unique_ptr<DeviceContext> owned_device_;  // set by the MemoryTracker constructors
  DeviceContext& device_;
  MemoryTracker& tracker_;  // device_'s
  // Off the CPU: batches are loaded into host memory counted here, then copied over.
  std::unique_ptr<MemoryTracker> host_batches_;
  BatchUploader uploads_{device_};  // batches to the device, held until copied
  TrainerOptions options_;
  nn::Model model_;
  std::unique_ptr<data::BatchSource> source_;
  std::unique_ptr<data::BatchSource> validation_;
  std::unique_ptr<nn::Loss> loss_;
  bool targets_are_tokens_ = false;
  std::optional<MetricsLog> metrics_log_;
  std::unique_ptr<RunDirectory> own_run_directory_;  // held, and so locked, while training
  bool run_directory_opened_ = false;
  comm::CommCounters counters_before_;  // at the end of the last step
  std::int64_t steps_done_ = 0;
  ProgressLine* progress_ = nullptr;  // run()'s, while it runs
  MemorySnapshot memory_after_first_step_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  std::unique_ptr<zero::ZeroStrategy> strategy_;
  const nn::KernelBackend* kernels_ = nullptr;  // the device's, with runtime.attention's kernels
  std::unique_ptr<BlockPass> pass_;
  Tensor loss_buffer_;  // (2 or 3) f32: loss sum, rows (and the norm's parts), all-reduced
  std::vector<HostScalar> micro_loss_sums_;  // this step's, read once at its end
  std::int64_t rows_this_step_ = 0;
  double global_rows_ = 0;  // loss rows of the last step over all ranks
  DType compute_dtype_ = DType::kF32;
  std::optional<optim::DynamicLossScaler> loss_scaler_;  // fp16 only
  std::int64_t applied_steps_ = 0;  // optimizer updates made (skipped steps excluded)
  std::int64_t resumed_step_ = 0;
  // train.sample_every's sampler, on every rank (decoding is collective); null on the meta
  // device and when off.
  std::unique_ptr<TrainingSample> sample_;
  // Saving and resuming (checkpoint.*); null on the estimator's meta device.
  std::unique_ptr<checkpoint::Checkpointer> checkpointer_;
};

}  // namespace zt::engine
