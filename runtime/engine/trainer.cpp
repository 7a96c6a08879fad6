// The training loop.
#include "runtime/engine/trainer.h"

#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>

#include "core/config/batch_size.h"
#include "core/config/config_enums.h"
#include "core/error.h"
#include "data/distributed_sampler.h"
#include "nn/loss/softmax_cross_entropy.h"
#include "optim/lr_schedule.h"
#include "runtime/engine/block_pass.h"
#include "runtime/engine/device_selection.h"
#include "runtime/engine/fault_injection.h"
#include "runtime/engine/model_factory.h"
#include "runtime/engine/progress_line.h"
#include "sharding/compute_dtype.h"

namespace zt::engine {

void check_supported(const Config& config) {
  resolved_comm_backend(config);  // throws for a backend this device or build cannot use
}

namespace {

// The config with the batch sizes resolved, so everything downstream reads final values.
Config with_batch_sizes(const Config& config, const BatchSizes& sizes) {
  Config resolved = config;
  resolved.train.micro_batch_size = sizes.micro_batch_size;
  resolved.train.grad_accum_steps = sizes.grad_accum_steps;
  resolved.train.global_batch_size = sizes.global_batch_size;
  return resolved;
}

}  // namespace

Trainer::Trainer(const Config& config, comm::Communicator& comm, MemoryTracker& tracker,
                 TrainerOptions options)
    : Trainer(config, comm::CommLanes::single(comm), tracker, std::move(options)) {}

Trainer::Trainer(const Config& config, comm::CommLanes lanes, MemoryTracker& tracker,
                 TrainerOptions options)
    : Trainer(config, lanes, make_cpu_device_context(tracker), std::move(options)) {}

Trainer::Trainer(const Config& config, comm::CommLanes lanes, DeviceContext& device,
                 TrainerOptions options)
    : Trainer(config, lanes, device, nullptr, std::move(options)) {}

Trainer::Trainer(const Config& config, comm::CommLanes lanes,
                 std::unique_ptr<DeviceContext> owned_device, TrainerOptions options)
    : Trainer(config, lanes, *owned_device, std::move(owned_device), std::move(options)) {}

// `owned_device` is taken by reference so that `device`, which may be *owned_device, is
// bound before anything moves from it.
Trainer::Trainer(const Config& config, comm::CommLanes lanes, DeviceContext& device,
                 std::unique_ptr<DeviceContext>&& owned_device, TrainerOptions options)
    : batch_sizes_(resolve_batch_sizes(config, lanes.world_size())),
      config_(with_batch_sizes(config, batch_sizes_)),
      lanes_(lanes),
      comm_(lanes.control),
      owned_device_(std::move(owned_device)),
      device_(device),
      tracker_(device.tracker()),
      options_(options),
      model_(make_model(config)) {
  check_supported(config);
  if (config.runtime.device != device_.device().kind) {
    throw ConfigError(where_set(config, "runtime.device") + ": runtime.device = \"" +
                      std::string(config_name(config.runtime.device)) +
                      "\", but this trainer was given " + device_.device().to_string() +
                      " to train on");
  }
  if (device_.device().kind != DeviceKind::kCpu) {
    // Batch sources write on the host: batches are read there, then copied over.
    host_batches_ = std::make_unique<MemoryTracker>(Device::cpu());
  }
  tracker_.set_phase("initialization");
  source_ = make_batch_source(config);
  optimizer_ = optim::make_optimizer(config.optimizer);
  strategy_ = zero::make_zero_strategy({model_, config_, lanes_, device_, *optimizer_});
  pass_ =
      std::make_unique<BlockPass>(model_, *strategy_, device_, config_.activation_checkpointing);
  loss_buffer_ = Tensor::zeros(Shape{2}, DType::kF32, tracker_, MemoryCategory::kCommBuffers);
  compute_dtype_ = zero::compute_dtype(config_);
  if (config_.precision.dtype == PrecisionDType::kFp16) {
    const PrecisionConfig& p = config_.precision;
    loss_scaler_.emplace(optim::LossScalerOptions{p.initial_loss_scale,
                                                  p.loss_scale_growth_interval, 2.0,
                                                  p.loss_scale_backoff, p.min_loss_scale});
  }
}

Trainer::~Trainer() = default;

TrainResult Trainer::run() {
  const bool leader = comm_.rank() == 0;
  std::optional<MetricsLog> metrics_log;
  std::unique_ptr<RunDirectory> own_run_directory;  // held, and so locked, until run() ends
  if (leader && options_.write_run_dir) {
    const RunDirectory* run_directory = options_.run_directory;
    if (run_directory == nullptr) {
      own_run_directory = RunDirectory::claim(config_);
      run_directory = own_run_directory.get();
    }
    run_directory->write_config(config_);
    metrics_log.emplace(run_directory->metrics_path());
  }
  std::optional<ProgressLine> progress;
  if (leader && options_.show_progress)
    progress.emplace(config_.train.steps, config_.run.log_every);
  const std::int64_t global_batch = config_.train.global_batch_size;

  TrainResult result;
  comm::CommCounters counters_before = strategy_->comm_counters();
  for (std::int64_t step = 1; step <= config_.train.steps; ++step) {
    maybe_inject_fault(options_.fault, comm_.rank(), step);
    const auto start = std::chrono::steady_clock::now();
    const double loss_scale = loss_scaler_ ? loss_scaler_->scale() : 1.0;
    const double local_loss = train_step(step);
    const auto lr = static_cast<float>(
        optim::learning_rate(config_.scheduler, config_.optimizer.lr, step, config_.train.steps));
    bool skipped = false;
    const double grad_norm = apply_gradients(step, lr, skipped);
    const double loss = global_mean_loss(local_loss, rows_this_step_);
    const double step_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

    const comm::CommCounters counters = strategy_->comm_counters();
    const auto sent = [&](comm::CollectiveKind kind) {
      return counters.bytes(kind) - counters_before.bytes(kind);
    };
    StepMetrics metrics;
    metrics.step = step;
    metrics.loss = loss;
    metrics.lr = lr;
    metrics.grad_norm = grad_norm;
    metrics.samples_per_s = static_cast<double>(global_batch) / (step_ms / 1000.0);
    // An MLP's samples are not tokens: its tokens_per_s is NaN (null in metrics.jsonl).
    metrics.tokens_per_s = config_.model.type == ModelType::kGpt
                               ? global_rows_ / (step_ms / 1000.0)
                               : std::numeric_limits<double>::quiet_NaN();
    metrics.step_ms = step_ms;
    metrics.loss_scale = loss_scale;
    metrics.skipped = skipped;
    metrics.all_reduce_bytes = sent(comm::CollectiveKind::kAllReduce);
    metrics.reduce_scatter_bytes = sent(comm::CollectiveKind::kReduceScatter);
    metrics.all_gather_bytes = sent(comm::CollectiveKind::kAllGather);
    counters_before = counters;
    if (step == 1) result.memory_after_first_step = tracker_.snapshot();
    result.losses.push_back(loss);
    result.metrics.push_back(metrics);
    if (metrics_log) metrics_log->append(metrics);
    if (progress) progress->update(metrics);
    if (!std::isfinite(loss)) {
      throw Error("training diverged at step " + std::to_string(step) + ": the loss is " +
                  std::to_string(loss) + "; lower optimizer.lr (now " +
                  std::to_string(config_.optimizer.lr) + ")");
    }
  }
  if (progress) progress->finish();
  return result;
}

double Trainer::apply_gradients(std::int64_t step, float lr, bool& skipped) {
  const double scale = loss_scaler_ ? loss_scaler_->scale() : 1.0;
  // The norm is all-reduced, so every rank sees the same value and makes the same choice:
  // a non-finite gradient anywhere makes it non-finite everywhere.
  const double norm_squared = strategy_->finish_gradients();
  const bool overflow = !std::isfinite(norm_squared);
  if (loss_scaler_) {
    skipped = loss_scaler_->update(overflow);
    if (skipped) return std::numeric_limits<double>::quiet_NaN();
  } else if (overflow) {
    throw Error("gradients became non-finite at step " + std::to_string(step) +
                " (precision.dtype has no loss scaling to recover); lower optimizer.lr (now " +
                std::to_string(config_.optimizer.lr) + ") or set optimizer.max_grad_norm");
  }
  const double grad_norm = std::sqrt(norm_squared) / scale;
  double factor = 1.0 / scale;
  if (config_.optimizer.max_grad_norm > 0 && grad_norm > config_.optimizer.max_grad_norm) {
    factor *= config_.optimizer.max_grad_norm / (grad_norm + 1e-6);
  }
  if (factor != 1.0) strategy_->scale_gradients(static_cast<float>(factor));
  tracker_.set_phase("optimizer step");
  strategy_->optimizer_step(++applied_steps_, lr);
  return grad_norm;
}

double Trainer::train_step(std::int64_t step) {
  strategy_->zero_gradients();
  rows_this_step_ = 0;
  double loss_sum = 0.0;
  for (std::int64_t micro = 0; micro < config_.train.grad_accum_steps; ++micro) {
    loss_sum += micro_batch(step, micro);
  }
  return loss_sum;
}

double Trainer::micro_batch(std::int64_t step, std::int64_t micro) {
  const data::DistributedSampler sampler(config_.train.micro_batch_size,
                                         config_.train.grad_accum_steps, comm_.world_size(),
                                         comm_.rank());
  tracker_.set_phase("data");
  data::Batch batch = source_->load(sampler.micro_batch(step - 1, micro),
                                    host_batches_ ? *host_batches_ : tracker_);
  if (host_batches_) {
    batch.inputs = on_device(batch.inputs);
    batch.targets = on_device(batch.targets);
  }
  const std::int64_t rows = batch.targets.numel();
  rows_this_step_ += rows;
  // Every rank's gradient is scaled by 1 / (rows in the global batch), so summing the
  // ranks' gradients gives the gradient of the global mean loss.
  const double global_rows = static_cast<double>(rows) / static_cast<double>(batch.samples) *
                             static_cast<double>(sampler.global_batch_size());
  Tensor inputs = batch.inputs;
  if (is_floating(inputs.dtype()) && inputs.dtype() != compute_dtype_) {
    inputs =
        Tensor::empty(batch.inputs.shape(), compute_dtype_, tracker_, MemoryCategory::kActivations);
    device_.ops().cast(batch.inputs, inputs);
  }
  Tensor logits = pass_->forward(inputs);
  tracker_.set_phase("loss");
  const double loss_scale = loss_scaler_ ? loss_scaler_->scale() : 1.0;
  nn::LossResult loss =
      nn::softmax_cross_entropy(logits, batch.targets, static_cast<float>(loss_scale / global_rows),
                                device_, nn::kernel_backend_for(device_.device()));
  logits = Tensor();
  if (options_.fault && options_.fault->poisons(comm_.rank(), step)) {
    device_.ops().fill(loss.grad_logits.view(0, Shape{1}), std::numeric_limits<float>::infinity());
  }
  pass_->backward(std::move(loss.grad_logits), micro == config_.train.grad_accum_steps - 1);
  return loss.loss_sum;
}

Tensor Trainer::on_device(const Tensor& host) {
  Tensor copy = Tensor::empty(host.shape(), host.dtype(), tracker_, MemoryCategory::kActivations);
  device_.ops().copy(host, copy);
  return copy;
}

double Trainer::global_mean_loss(double local_loss_sum, std::int64_t local_rows) {
  // The loss buffer lives on the device the collectives run on: the host's values go over
  // and come back through a host view (a plain copy on the CPU).
  std::array<float, 2> values{static_cast<float>(local_loss_sum), static_cast<float>(local_rows)};
  const Tensor host_values = Tensor::wrap(values.data(), Shape{2}, DType::kF32);
  device_.ops().copy(host_values, loss_buffer_);
  comm_.all_reduce(loss_buffer_, comm::ReduceOp::kSum)->wait();
  device_.ops().copy(loss_buffer_, host_values);
  device_.compute_stream().synchronize();
  global_rows_ = static_cast<double>(values[1]);
  return static_cast<double>(values[0]) / static_cast<double>(values[1]);
}

}  // namespace zt::engine
