// The training loop.
#include "runtime/engine/trainer.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "core/config/batch_size.h"
#include "core/config/config_enums.h"
#include "core/device/cpu_device_ops.h"
#include "core/error.h"
#include "data/distributed_sampler.h"
#include "nn/loss/softmax_cross_entropy.h"
#include "optim/lr_schedule.h"
#include "optim/lr_schedule_warnings.h"
#include "runtime/checkpoint/checkpointer.h"
#include "runtime/checkpoint/hf_import.h"
#include "runtime/checkpoint/run_id.h"
#include "runtime/engine/block_pass.h"
#include "runtime/engine/data_vocabulary.h"
#include "runtime/engine/device_selection.h"
#include "runtime/engine/fault_injection.h"
#include "runtime/engine/json_text.h"
#include "runtime/engine/model_factory.h"
#include "runtime/engine/progress_line.h"
#include "runtime/engine/training_sample.h"
#include "sharding/compute_dtype.h"
#include "sharding/host_transfer.h"

namespace zt::engine {

namespace {

// Bound on one rank's memory profile (then it says it is truncated): ~20 MiB of JSON.
constexpr std::size_t kMaxProfileEvents = 200000;

// The config with the batch sizes resolved, so everything downstream reads final values.
Config with_batch_sizes(const Config& config, const BatchSizes& sizes) {
  Config resolved = config;
  resolved.train.micro_batch_size = sizes.micro_batch_size;
  resolved.train.grad_accum_steps = sizes.grad_accum_steps;
  resolved.train.global_batch_size = sizes.global_batch_size;
  return resolved;
}

// A model the strategies can shard: at least one block, and parameters to train.
void check_trainable(const nn::Model& model) {
  if (model.num_blocks() == 0) {
    throw Error("model '" + model.name() +
                "' has no blocks: add its layers with Model::add_block before training");
  }
  if (model.parameter_count() == 0) {
    std::string blocks;
    for (std::size_t b = 0; b < model.num_blocks(); ++b) {
      blocks += (b == 0 ? "" : ", ") + model.block(b).name;
    }
    throw Error("model '" + model.name() + "' has no parameters to train (its blocks: " + blocks +
                ")");
  }
}

}  // namespace

TrainingParts training_parts_from_config(const Config& given) {
  // The data's vocabulary resolved once, for the sources' checks and the loss's softmax.
  const Config config = with_data_vocab_size(given);
  TrainingParts parts;
  parts.model = make_model(config);
  parts.source = make_batch_source(config);
  if (config.train.eval_every > 0) parts.validation = make_validation_source(config);
  parts.targets_are_tokens = is_language_model(config.model.type);
  // A language model's padded vocabulary rows take no part (Note [Padded vocabulary]).
  parts.loss = nn::make_softmax_cross_entropy_loss(
      parts.targets_are_tokens ? data_vocabulary(config.model) : 0);
  return parts;
}

Trainer::Trainer(const Config& config, comm::Communicator& comm, MemoryTracker& tracker,
                 TrainerOptions options)
    : Trainer(config, comm::CommLanes::single(comm), tracker, std::move(options)) {}

Trainer::Trainer(const Config& config, comm::CommLanes lanes, MemoryTracker& tracker,
                 TrainerOptions options)
    : Trainer(config, training_parts_from_config(config), lanes, make_cpu_device_context(tracker),
              std::move(options)) {}

Trainer::Trainer(const Config& config, comm::CommLanes lanes, DeviceContext& device,
                 TrainerOptions options)
    : Trainer(config, training_parts_from_config(config), lanes, device, nullptr,
              std::move(options)) {}

Trainer::Trainer(const Config& config, TrainingParts parts, comm::CommLanes lanes,
                 DeviceContext& device, TrainerOptions options)
    : Trainer(config, std::move(parts), lanes, device, nullptr, std::move(options)) {}

Trainer::Trainer(const Config& config, TrainingParts parts, comm::CommLanes lanes,
                 std::unique_ptr<DeviceContext> owned_device, TrainerOptions options)
    : Trainer(config, std::move(parts), lanes, *owned_device, std::move(owned_device),
              std::move(options)) {}

// `owned_device` is taken by reference so that `device`, which may be *owned_device, is
// bound before anything moves from it.
Trainer::Trainer(const Config& config, TrainingParts parts, comm::CommLanes lanes,
                 DeviceContext& device, std::unique_ptr<DeviceContext>&& owned_device,
                 TrainerOptions options)
    : batch_sizes_(resolve_batch_sizes(config, lanes.world_size())),
      config_(with_batch_sizes(config, batch_sizes_)),
      lanes_(lanes),
      comm_(lanes.control),
      owned_device_(std::move(owned_device)),
      device_(device),
      tracker_(device.tracker()),
      options_(std::move(options)),
      model_(std::move(parts.model)),
      source_(std::move(parts.source)),
      validation_(std::move(parts.validation)),
      loss_(parts.loss ? std::move(parts.loss) : nn::make_softmax_cross_entropy_loss()),
      targets_are_tokens_(parts.targets_are_tokens) {
  // The estimator's meta device opens no file: the NVMe directory need not exist where it runs.
  check_supported(config, !device_.device().meta);
  check_shard_group_size(config, lanes.world_size());
  check_hpz_partition_size(config, lanes.world_size());
  check_quantized_weights(config);
  check_quantized_gradients(config);
  // Said once per run (not by the estimator's meta trainers, which are many).
  if (const auto warning = optim::warmup_outlasts_run_warning(config);
      warning && comm_.rank() == 0 && !device_.device().meta) {
    std::fprintf(stderr, "zerotrain: warning: %s\n", warning->c_str());
  }
  check_trainable(model_);
  if (config_.train.eval_every > 0 && !validation_) {
    throw ConfigError(where_set(config, "train.eval_every") +
                      ": train.eval_every = " + std::to_string(config_.train.eval_every) +
                      " needs validation samples, and this trainer's parts have none (set "
                      "TrainingParts::validation, or train.eval_every = 0)");
  }
  check_sample_keys(config_, targets_are_tokens_);
  if (config.runtime.device != device_.device().kind) {
    throw ConfigError(where_set(config, "runtime.device") + ": runtime.device = \"" +
                      std::string(config_name(config.runtime.device)) +
                      "\", but this trainer was given " + device_.device().to_string() +
                      " to train on");
  }
  if (device_.device().kind != DeviceKind::kCpu) {
    // Batch sources write on the host: batches are read into its staging memory, then
    // copied over without a host wait (Note [Batches in staging memory]). A meta device's
    // staging memory has no bytes to write: its batches stay in plain host memory.
    host_batches_ = device_.device().meta
                        ? std::make_unique<MemoryTracker>(Device::cpu())
                        : std::make_unique<MemoryTracker>(device_.host_staging_allocator());
  }
  tracker_.set_phase("initialization");
  tracker_.set_step(0);
  // Memory-profiling mode: every allocation from here to the end of the profiled steps.
  if (config_.runtime.memory_profile) tracker_.start_timeline(kMaxProfileEvents);
  optimizer_ = optim::make_optimizer(config.optimizer);
  strategy_ = zero::make_zero_strategy({model_, config_, lanes_, device_, *optimizer_});
  // Note [cuDNN attention never ends a run]: cuDNN's graphs for the steps are built here.
  const AttentionChoice attention = checked_attention(config_, [&] {
    return nn::cudnn_attention_refusal(device_.device(), training_attention_shape(config_),
                                       zero::compute_dtype(config_));
  });
  if (attention.warning && comm_.rank() == 0 && !device_.device().meta) {
    std::fprintf(stderr, "zerotrain: warning: %s\n", attention.warning->c_str());
  }
  kernels_ = &nn::kernel_backend_for(device_.device(), attention.attention);
  pass_ = std::make_unique<BlockPass>(model_, *strategy_, device_, *kernels_,
                                      config_.activation_checkpointing);
  {
    const ScopedAllocationName name("loss buffer");
    // The loss sum and rows, and in stages 1-3 the gradient norm's parts with them.
    const std::int64_t floats = config_.zero.stage == 0 ? 2 : 3;
    loss_buffer_ =
        Tensor::zeros(Shape{floats}, DType::kF32, tracker_, MemoryCategory::kCommBuffers);
  }
  compute_dtype_ = zero::compute_dtype(config_);
  if (config_.precision.dtype == PrecisionDType::kFp16) {
    const PrecisionConfig& p = config_.precision;
    loss_scaler_.emplace(optim::LossScalerOptions{p.initial_loss_scale,
                                                  p.loss_scale_growth_interval, 2.0,
                                                  p.loss_scale_backoff, p.min_loss_scale});
  }
  bool resumed = false;
  if (!device_.device().meta &&
      (config_.checkpoint.every_steps > 0 || !config_.checkpoint.resume.empty())) {
    make_checkpointer();
    tracker_.set_phase("checkpoint load");
    if (const auto state = checkpointer_->load()) {
      restore(*state);
      resumed = true;
    }
  }
  if (!device_.device().meta && !config_.checkpoint.init_from.empty()) {
    if (resumed) {
      // A resume continues from its checkpoint, whose run started from init_from already
      // (checkpoint.resume = "latest" finding none starts from init_from instead).
      if (comm_.rank() == 0) {
        std::fprintf(stderr,
                     "zerotrain: checkpoint.resume took precedence: checkpoint.init_from = "
                     "\"%s\" is not read\n",
                     config_.checkpoint.init_from.c_str());
      }
    } else {
      tracker_.set_phase("checkpoint load");
      checkpoint::init_from_hugging_face(config_, *strategy_, optimizer_->states_per_element(),
                                         comm_.rank(), [this](std::array<float, 2> values) {
                                           return all_reduce_pair(values, comm::ReduceOp::kMax);
                                         });
    }
  }
  sample_ = make_training_sample(config_, validation_.get(), source_.get(), sharded_model());
  counters_before_ = strategy_->comm_counters();
}

Trainer::~Trainer() = default;

void Trainer::make_checkpointer() {
  const int rank = comm_.rank();
  checkpointer_ = std::make_unique<checkpoint::Checkpointer>(
      config_, *strategy_, optimizer_->states_per_element(), rank, comm_.world_size(),
      checkpoint::CheckpointerHooks{[this](std::array<float, 2> values) {
                                      return all_reduce_pair(values, comm::ReduceOp::kMax);
                                    },
                                    [this, rank](std::int64_t step, std::string_view phase) {
                                      maybe_inject_fault(options_.fault, rank, step, phase);
                                    }},
      options_.write_run_dir ? std::filesystem::path(config_.run.dir) : std::filesystem::path(),
      options_.resume_weights_only);
}

void Trainer::record_run_id() {
  if (!checkpointer_ || checkpointer_->run_id().empty()) return;
  const RunDirectory* run_directory =
      options_.run_directory ? options_.run_directory : own_run_directory_.get();
  if (run_directory != nullptr)
    checkpoint::write_run_id(run_directory->path(), checkpointer_->run_id());
}

std::filesystem::path Trainer::save_checkpoint() {
  if (device_.device().meta)
    throw Error("save_checkpoint: the meta device holds no values to save");
  if (!checkpointer_) make_checkpointer();
  const std::string phase = tracker_.phase();
  tracker_.set_phase("checkpoint save");
  checkpointer_->save_now(trainer_state());
  if (comm_.rank() == 0 && options_.write_run_dir && run_directory_opened_) record_run_id();
  tracker_.set_phase(phase);
  return checkpointer_->directory() / checkpoint::step_directory_name(steps_done_);
}

checkpoint::TrainerState Trainer::trainer_state() const {
  checkpoint::TrainerState state;
  state.step = steps_done_;
  state.applied_steps = applied_steps_;
  if (loss_scaler_) {
    state.loss_scale = loss_scaler_->scale();
    state.loss_scale_clean_steps = loss_scaler_->clean_steps();
  }
  return state;
}

void Trainer::restore(const checkpoint::TrainerState& state) {
  steps_done_ = state.step;
  resumed_step_ = state.step;
  applied_steps_ = state.applied_steps;
  // fp16 continues with the saved scale; a checkpoint from bf16 or fp32 has none, and the
  // scale starts at precision.initial_loss_scale.
  if (loss_scaler_ && state.loss_scale) {
    loss_scaler_->restore(*state.loss_scale, state.loss_scale_clean_steps);
  }
}

void Trainer::all_reduce_floats(std::span<float> values, comm::ReduceOp op) {
  ZT_CHECK(values.size() <= static_cast<std::size_t>(loss_buffer_.numel()),
           "more floats to all-reduce than the loss buffer holds");
  // The loss buffer lives on the device the collectives run on: the host's values go over
  // and come back through a host view (a plain copy on the CPU).
  const Shape shape{static_cast<std::int64_t>(values.size())};
  const Tensor host_values = Tensor::wrap(values.data(), shape, DType::kF32);
  const Tensor buffer = loss_buffer_.view(0, shape);
  device_.ops().copy(host_values, buffer);
  comm_.all_reduce(buffer, op)->wait();
  device_.ops().copy(buffer, host_values);
  device_.compute_stream().synchronize();
}

std::array<float, 2> Trainer::all_reduce_pair(std::array<float, 2> values, comm::ReduceOp op) {
  all_reduce_floats(values, op);
  return values;
}

MemorySnapshot Trainer::memory_snapshot() const {
  MemorySnapshot snapshot = tracker_.snapshot();
  if (const MemoryTracker* host = strategy_->host_offload_tracker()) {
    // Offloaded states are host memory: their category comes from the host tracker, and the
    // total stays the device's.
    const MemorySnapshot host_snapshot = host->snapshot();
    const auto c = static_cast<std::size_t>(MemoryCategory::kHostOffload);
    snapshot.current_bytes[c] = host_snapshot.current_bytes[c];
    snapshot.peak_bytes[c] = host_snapshot.peak_bytes[c];
    snapshot.peak_phase[c] = host_snapshot.peak_phase[c];
  }
  return snapshot;
}

void Trainer::open_run_directory() {
  if (run_directory_opened_) return;
  run_directory_opened_ = true;
  if (comm_.rank() != 0 || !options_.write_run_dir) return;
  const RunDirectory* run_directory = options_.run_directory;
  if (run_directory == nullptr) {
    own_run_directory_ = RunDirectory::claim(config_);
    run_directory = own_run_directory_.get();
  }
  // With the data's vocabulary as resolved when it pads (Note [Padded vocabulary]), so that
  // `generate` from this run's config.toml draws no padded id even where data.tokenizer or
  // init_from's config.json is not found.
  Config saved = config_;
  if (const std::int64_t data_vocab = data_vocab_size(config_);
      data_vocab < config_.model.vocab_size) {
    saved.model.data_vocab_size = data_vocab;
  }
  run_directory->write_config(saved);
  record_run_id();
  metrics_log_.emplace(run_directory->metrics_path(), resumed_step_);
}

TrainResult Trainer::run() {
  if (!source_) {
    throw Error(
        "Trainer::run() needs a batch source; this trainer was built without one "
        "(feed it with step(batch) instead)");
  }
  open_run_directory();
  std::optional<ProgressLine> progress;
  if (comm_.rank() == 0 && options_.show_progress) {
    progress.emplace(config_.train.steps, config_.run.log_every);
    progress_ = &*progress;
  }
  struct ClearProgress {
    ProgressLine*& progress;
    ~ClearProgress() { progress = nullptr; }
  } clear_progress{progress_};

  TrainResult result;
  while (steps_done_ < config_.train.steps) {
    const std::int64_t step = steps_done_ + 1;
    maybe_inject_fault(options_.fault, comm_.rank(), step);
    const StepMetrics metrics =
        run_step([&](std::int64_t micro) { return load_from_source(step, micro); });
    result.losses.push_back(metrics.loss);
    result.metrics.push_back(metrics);
  }
  if (checkpointer_) checkpointer_->finish();
  if (progress) progress->finish();
  result.memory_after_first_step = memory_after_first_step_;
  return result;
}

StepMetrics Trainer::step(const data::Batch& batch) {
  const std::int64_t micro_rows = config_.train.micro_batch_size;
  check_batch(batch, micro_rows * config_.train.grad_accum_steps, "step(batch)");
  open_run_directory();
  return run_step([&](std::int64_t micro) {
    data::Batch part;
    part.samples = micro_rows;
    part.inputs = batch.inputs.slice_rows(micro * micro_rows, (micro + 1) * micro_rows);
    part.targets = batch.targets.slice_rows(micro * micro_rows, (micro + 1) * micro_rows);
    return part;
  });
}

void Trainer::check_batch(const data::Batch& batch, std::int64_t samples, const char* what) const {
  const auto shape_of = [](const Tensor& t) {
    return t.defined() ? t.shape().to_string() + " " + std::string(dtype_name(t.dtype()))
                       : std::string("(none)");
  };
  const std::string shapes =
      "inputs " + shape_of(batch.inputs) + ", targets " + shape_of(batch.targets);
  if (!batch.inputs.defined() || !batch.targets.defined() || batch.inputs.rank() == 0 ||
      batch.targets.rank() == 0) {
    throw Error(std::string(what) +
                ": a batch needs inputs and targets with a sample axis first; "
                "got " +
                shapes);
  }
  if (batch.samples != batch.inputs.dim(0) || batch.samples != batch.targets.dim(0)) {
    throw Error(std::string(what) + ": the batch says " + std::to_string(batch.samples) +
                " samples, but its first axes hold " + shapes);
  }
  if (samples > 0 && batch.samples != samples) {
    throw Error(std::string(what) + ": expected this rank's share of the global batch, " +
                std::to_string(samples) + " samples (train.micro_batch_size " +
                std::to_string(config_.train.micro_batch_size) + " × train.grad_accum_steps " +
                std::to_string(config_.train.grad_accum_steps) + "), got " +
                std::to_string(batch.samples) + ": " + shapes);
  }
  if (samples == 0 && batch.samples == 0) {
    throw Error(std::string(what) + ": the batch is empty: " + shapes);
  }
  // User data is checked here, on the host where it was read (token ids against the
  // vocabulary), so no device kernel has to copy it back to check it.
  model_.block(0).module->check_input(batch.inputs);
}

StepMetrics Trainer::run_step(const std::function<data::Batch(std::int64_t micro)>& load_micro) {
  const std::int64_t step = steps_done_ + 1;
  if (step > config_.train.steps) {
    throw Error("step " + std::to_string(step) +
                " is past train.steps = " + std::to_string(config_.train.steps) +
                ", the length of the learning-rate schedule; raise train.steps");
  }
  const auto start = std::chrono::steady_clock::now();
  tracker_.set_step(step);
  const double loss_scale = loss_scaler_ ? loss_scaler_->scale() : 1.0;
  strategy_->zero_gradients();
  rows_this_step_ = 0;
  const auto lr = static_cast<float>(
      optim::learning_rate(config_.scheduler, config_.optimizer.lr, step, config_.train.steps));
  // Without clipping or loss scaling nothing can veto the update: the strategy may apply it
  // block by block as the last micro-batch's backward finishes each one.
  const bool update_cannot_be_vetoed = !loss_scaler_ && config_.optimizer.max_grad_norm <= 0;
  micro_loss_sums_.clear();
  try {
    for (std::int64_t micro = 0; micro < config_.train.grad_accum_steps; ++micro) {
      data::Batch batch = load_micro(micro);
      if (update_cannot_be_vetoed && micro + 1 == config_.train.grad_accum_steps) {
        strategy_->prepare_update(applied_steps_ + 1, lr);
      }
      micro_loss_sums_.push_back(micro_batch(step, micro, std::move(batch)));
    }
  } catch (...) {
    // A bad batch or loss fails in forward or at the loss, before any gradient was reduced:
    // drop what forward kept, so the next step starts clean.
    pass_->discard_forward();
    throw;
  }
  const double local_loss = read_loss_sums(step);
  zero::GradientNormSquared norm_squared;
  if (update_cannot_be_vetoed) {
    // Nothing needs the norm before the update: the strategy may read it in the update's own
    // pass over the gradients (DDP), and the sums go over after the update, so its own
    // collectives (stages 1-2 refresh the parameters) are submitted first.
    norm_squared = strategy_->finish_gradients_and_update(
        ++applied_steps_, lr, [&] { tracker_.set_phase("optimizer step"); });
  } else {
    norm_squared = strategy_->finish_gradients();
  }
  // One all-reduce for the step's loss, its rows and, where the ranks hold gradient shards,
  // the norm's parts (Note [One host wait per step]).
  std::array<float, 3> sums{static_cast<float>(local_loss), static_cast<float>(rows_this_step_),
                            static_cast<float>(norm_squared.value)};
  const std::span<float> reduced(sums.data(), norm_squared.rank_part ? 3 : 2);
  const auto global_norm_squared = [&] {
    return norm_squared.rank_part ? static_cast<double>(sums[2]) : norm_squared.value;
  };
  bool skipped = false;
  double grad_norm = 0.0;
  if (update_cannot_be_vetoed) {
    all_reduce_floats(reduced, comm::ReduceOp::kSum);
    // The step learns of a non-finite gradient only now, after its update: the run stops here
    // either way, and what was saved is untouched.
    check_gradients_finite(step, global_norm_squared());
    grad_norm = std::sqrt(global_norm_squared());
  } else {
    all_reduce_floats(reduced, comm::ReduceOp::kSum);
    grad_norm = apply_gradients(step, lr, global_norm_squared(), skipped);
  }
  global_rows_ = static_cast<double>(sums[1]);
  const double loss = static_cast<double>(sums[0]) / global_rows_;
  // The collective check's comparison of the step's ops (comm.check_collectives = "step"):
  // counted in the step's time and bytes.
  if (options_.end_of_step) options_.end_of_step();
  const double step_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  steps_done_ = step;
  // memory.json's "after_first_step": the first step this run made (a resumed run's too).
  if (step == resumed_step_ + 1) memory_after_first_step_ = memory_snapshot();
  // After the snapshot, so "after_first_step" is training's alone; before the counters are
  // read, so the step's bytes include its evaluation's gathers and all-reduce.
  const double val_loss =
      evaluates_after(step) ? validation_loss() : std::numeric_limits<double>::quiet_NaN();
  // Likewise the sample: its gathers' bytes count in this step's.
  SampleText sample = sample_ && samples_after(config_, step) ? sample_->take() : SampleText();

  const comm::CommCounters counters = strategy_->comm_counters();
  const auto sent = [&](comm::CollectiveKind kind) {
    return counters.bytes(kind) - counters_before_.bytes(kind);
  };
  StepMetrics metrics;
  metrics.step = step;
  metrics.loss = loss;
  metrics.lr = lr;
  metrics.grad_norm = grad_norm;
  metrics.samples_per_s = static_cast<double>(config_.train.global_batch_size) / (step_ms / 1000.0);
  // Samples that are not token sequences have no tokens/s: NaN (null in metrics.jsonl).
  metrics.tokens_per_s = targets_are_tokens_ ? global_rows_ / (step_ms / 1000.0)
                                             : std::numeric_limits<double>::quiet_NaN();
  metrics.step_ms = step_ms;
  metrics.loss_scale = loss_scale;
  metrics.skipped = skipped;
  metrics.all_reduce_bytes = sent(comm::CollectiveKind::kAllReduce);
  metrics.reduce_scatter_bytes = sent(comm::CollectiveKind::kReduceScatter);
  metrics.all_gather_bytes = sent(comm::CollectiveKind::kAllGather);
  metrics.all_to_all_bytes = sent(comm::CollectiveKind::kAllToAll);
  metrics.cross_node_bytes =
      counters.total_cross_node_bytes() - counters_before_.total_cross_node_bytes();
  metrics.intra_node_bytes =
      counters.total_intra_node_bytes() - counters_before_.total_intra_node_bytes();
  metrics.val_loss = val_loss;
  metrics.sample = std::move(sample.text);
  metrics.sample_prompt = std::move(sample.prompt);
  counters_before_ = counters;
  // The profile covers this run's first memory_profile_steps steps (a resumed run's too).
  if (config_.runtime.memory_profile &&
      step == resumed_step_ + config_.runtime.memory_profile_steps) {
    tracker_.stop_timeline();
  }
  if (metrics_log_) metrics_log_->append(metrics);
  if (progress_) {
    progress_->update(metrics);
    if (sample_ && !metrics.sample.empty())
      progress_->print_sample(sample_->description(), metrics);
  }
  if (!std::isfinite(loss)) {
    throw Error("training diverged at step " + std::to_string(step) + ": the loss is " +
                std::to_string(loss) + "; lower optimizer.lr (now " +
                number_text(config_.optimizer.lr) + ")");
  }
  if (checkpointer_) {
    tracker_.set_phase("checkpoint save");
    checkpointer_->after_step(trainer_state());
  }
  if (options_.on_step) options_.on_step(metrics);
  return metrics;
}

void Trainer::check_gradients_finite(std::int64_t step, double norm_squared) const {
  if (std::isfinite(norm_squared)) return;
  throw Error("gradients became non-finite at step " + std::to_string(step) +
              " (precision.dtype has no loss scaling to recover); lower optimizer.lr (now " +
              number_text(config_.optimizer.lr) + ") or set optimizer.max_grad_norm");
}

double Trainer::apply_gradients(std::int64_t step, float lr, double norm_squared, bool& skipped) {
  const double scale = loss_scaler_ ? loss_scaler_->scale() : 1.0;
  // The norm is global, so every rank sees the same value and makes the same choice: a
  // non-finite gradient anywhere makes it non-finite everywhere.
  const bool overflow = !std::isfinite(norm_squared);
  if (loss_scaler_) {
    skipped = loss_scaler_->update(overflow);
    if (skipped) return std::numeric_limits<double>::quiet_NaN();
  }
  check_gradients_finite(step, norm_squared);
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

data::Batch Trainer::load_step_batch(const data::BatchSource& source, std::int64_t step) {
  if (step < 1) throw Error("load_step_batch: steps count from 1, got " + std::to_string(step));
  const data::DistributedSampler sampler(config_.train.micro_batch_size,
                                         config_.train.grad_accum_steps, comm_.world_size(),
                                         comm_.rank());
  MemoryTracker& memory = batch_tracker();
  std::vector<data::Batch> parts;
  for (std::int64_t micro = 0; micro < config_.train.grad_accum_steps; ++micro) {
    parts.push_back(source.load(sampler.micro_batch(step - 1, micro), memory));
    check_batch(parts.back(), config_.train.micro_batch_size, "the batch source's batch");
  }
  if (parts.size() == 1) return std::move(parts.front());
  // The micro-batches one after another along the sample axis (host memory: a plain copy).
  const auto joined = [&](Tensor data::Batch::*field) {
    const Tensor& first = parts.front().*field;
    Tensor all = Tensor::empty(first.shape().with_extent(0, first.dim(0) * std::ssize(parts)),
                               first.dtype(), memory, MemoryCategory::kActivations);
    std::int64_t offset = 0;
    for (const data::Batch& part : parts) {
      const Tensor& piece = part.*field;
      cpu_device_ops().copy(piece, all.view(offset, piece.shape()));
      offset += piece.numel();
    }
    return all;
  };
  data::Batch batch;
  batch.inputs = joined(&data::Batch::inputs);
  batch.targets = joined(&data::Batch::targets);
  batch.samples = config_.train.micro_batch_size * config_.train.grad_accum_steps;
  return batch;
}

data::Batch Trainer::load_from_source(std::int64_t step, std::int64_t micro) {
  const data::DistributedSampler sampler(config_.train.micro_batch_size,
                                         config_.train.grad_accum_steps, comm_.world_size(),
                                         comm_.rank());
  tracker_.set_phase("data");
  const ScopedAllocationName name("batch");
  data::Batch batch = source_->load(sampler.micro_batch(step - 1, micro),
                                    host_batches_ ? *host_batches_ : tracker_);
  check_batch(batch, config_.train.micro_batch_size, "the batch source's batch");
  return batch;
}

Tensor Trainer::device_inputs(const Tensor& inputs) {
  Tensor on = inputs.device() != device_.device() ? on_device(inputs) : inputs;
  if (is_floating(on.dtype()) && on.dtype() != compute_dtype_) {
    Tensor cast = Tensor::empty(on.shape(), compute_dtype_, tracker_, MemoryCategory::kActivations);
    device_.ops().cast(on, cast);
    on = cast;
  }
  return on;
}

nn::LossResult Trainer::forward_loss(const data::Batch& batch, float grad_scale, std::int64_t step,
                                     std::int64_t micro, bool for_backward,
                                     const std::function<void(const Tensor&)>& on_output) {
  const Tensor inputs = device_inputs(batch.inputs);
  Tensor targets = batch.targets;
  if (targets.device() != device_.device()) targets = on_device(targets);
  const nn::DropoutDraw draw = dropout_draw(step, micro);
  Tensor output = for_backward ? pass_->forward(inputs, &draw) : pass_->forward_only(inputs);
  if (on_output) on_output(output);
  tracker_.set_phase(for_backward ? "loss" : "evaluation loss");
  nn::LossContext ctx{device_, *kernels_};
  nn::LossResult loss = loss_->compute(output, targets, grad_scale, ctx);
  if (loss.rows != targets.numel() || !loss.grad_logits.defined() ||
      loss.grad_logits.shape() != output.shape() || loss.grad_logits.dtype() != output.dtype()) {
    throw Error("the loss '" + std::string(loss_->name()) + "' returned rows " +
                std::to_string(loss.rows) + " and a gradient " +
                (loss.grad_logits.defined() ? loss.grad_logits.shape().to_string() : "(none)") +
                "; it must return rows = the targets' " + std::to_string(targets.numel()) +
                " elements and a gradient shaped like the output " + output.shape().to_string() +
                " " + std::string(dtype_name(output.dtype())));
  }
  // Checked now only if that needs no wait (the CPU, a custom loss's host double): a device's
  // sum is checked with the step's others after its one wait (read_loss_sums).
  if (loss.loss_sum.ready()) check_loss_finite(loss.loss_sum, step, micro);
  return loss;
}

nn::DropoutDraw Trainer::dropout_draw(std::int64_t step, std::int64_t micro) const {
  const data::DistributedSampler sampler(config_.train.micro_batch_size,
                                         config_.train.grad_accum_steps, comm_.world_size(),
                                         comm_.rank());
  const std::int64_t first = sampler.micro_batch(step - 1, micro).first;
  return {static_cast<std::uint64_t>(config_.run.seed), step,
          first - (step - 1) * sampler.global_batch_size()};
}

void Trainer::check_loss_finite(double loss_sum, std::int64_t step, std::int64_t micro) const {
  if (std::isfinite(loss_sum)) return;
  throw Error("the loss '" + std::string(loss_->name()) + "' is " + std::to_string(loss_sum) +
              " at step " + std::to_string(step) + ", micro-batch " + std::to_string(micro) +
              " on rank " + std::to_string(comm_.rank()) +
              ": the model's output or the loss is not finite (lower optimizer.lr, now " +
              number_text(config_.optimizer.lr) + ", or check the loss and the data)");
}

// Note [One host wait per step]
// A loss leaves its micro-batch's sum in host staging memory for the device to write (a
// HostScalar), so the micro-batch loop never waits for the device: on CUDA, forward,
// backward and the next micro-batch's copies stay queued behind each other. The step's sums
// are read here, after one wait on the compute stream, and added in micro-batch order in
// double, exactly as they were added when each was read as it came (the CPU's numbers do not
// change). A non-finite sum the device wrote is reported here, naming its micro-batch, after
// the step's backward passes have run but before any update that a check can still veto.
// The loss sum, its rows and, in stages 1-3, the parts of the gradient norm then go over the
// ranks in one all-reduce of three floats (two collectives, two host waits before).
double Trainer::read_loss_sums(std::int64_t step) {
  device_.compute_stream().synchronize();
  uploads_.release_completed();
  double local_loss = 0.0;
  for (std::size_t micro = 0; micro < micro_loss_sums_.size(); ++micro) {
    const double sum = micro_loss_sums_[micro];
    check_loss_finite(sum, step, static_cast<std::int64_t>(micro));
    local_loss += sum;
  }
  micro_loss_sums_.clear();
  return local_loss;
}

HostScalar Trainer::micro_batch(std::int64_t step, std::int64_t micro, data::Batch batch) {
  const data::DistributedSampler sampler(config_.train.micro_batch_size,
                                         config_.train.grad_accum_steps, comm_.world_size(),
                                         comm_.rank());
  const std::int64_t rows = batch.targets.numel();
  rows_this_step_ += rows;
  // Every rank's gradient is scaled by 1 / (rows in the global batch), so summing the
  // ranks' gradients gives the gradient of the global mean loss.
  const double global_rows = static_cast<double>(rows) / static_cast<double>(batch.samples) *
                             static_cast<double>(sampler.global_batch_size());
  const double loss_scale = loss_scaler_ ? loss_scaler_->scale() : 1.0;
  nn::LossResult loss =
      forward_loss(batch, static_cast<float>(loss_scale / global_rows), step, micro);
  if (options_.fault && options_.fault->poisons(comm_.rank(), step)) {
    device_.ops().fill(loss.grad_logits.view(0, Shape{1}), std::numeric_limits<float>::infinity());
  }
  if (micro == 0) maybe_inject_fault(options_.fault, comm_.rank(), step, "backward");
  pass_->backward(std::move(loss.grad_logits), micro == config_.train.grad_accum_steps - 1);
  return loss.loss_sum;
}

Tensor Trainer::on_device(const Tensor& host) { return uploads_.upload(host); }

double Trainer::global_mean_loss(double local_loss_sum, std::int64_t local_rows) {
  const std::array<float, 2> values = all_reduce_pair(
      {static_cast<float>(local_loss_sum), static_cast<float>(local_rows)}, comm::ReduceOp::kSum);
  global_rows_ = static_cast<double>(values[1]);
  return static_cast<double>(values[0]) / static_cast<double>(values[1]);
}

}  // namespace zt::engine
