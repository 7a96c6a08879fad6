// Estimating one rank by training two steps on a meta device.
#include "runtime/estimate/memory_estimator.h"

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "comm/meta_communicator.h"
#include "comm/topology.h"
#include "core/config/batch_size.h"
#include "core/device/meta_device.h"
#include "data/batch.h"
#include "optim/optimizer.h"
#include "runtime/checkpoint/checkpoint_format.h"
#include "runtime/engine/model_factory.h"
#include "runtime/engine/supported_config.h"
#include "runtime/engine/trainer.h"
#include "runtime/estimate/estimate_limits.h"

namespace zt::estimate {
namespace {

// Batches of the built-in sources' shapes and dtypes, with nothing read: the estimate needs
// no data file, and on a meta device there is nowhere to put the values anyway.
class ShapeOnlySource final : public data::BatchSource {
 public:
  explicit ShapeOnlySource(const Config& config)
      : gpt_(is_language_model(config.model.type)),
        seq_len_(config.model.seq_len),
        input_dim_(config.model.input_dim) {}

  data::Batch load(data::SampleRange range, MemoryTracker& tracker) const override {
    data::Batch batch;
    batch.samples = range.count;
    if (gpt_) {
      batch.inputs = Tensor::zeros(Shape{range.count, seq_len_}, DType::kI32, tracker,
                                   MemoryCategory::kActivations);
      batch.targets = Tensor::zeros(Shape{range.count, seq_len_}, DType::kI32, tracker,
                                    MemoryCategory::kActivations);
    } else {
      batch.inputs = Tensor::zeros(Shape{range.count, input_dim_}, DType::kF32, tracker,
                                   MemoryCategory::kActivations);
      batch.targets =
          Tensor::zeros(Shape{range.count}, DType::kI32, tracker, MemoryCategory::kActivations);
    }
    return batch;
  }

 private:
  bool gpt_;
  std::int64_t seq_len_;
  std::int64_t input_dim_;
};

// Memory repeats from one micro-batch to the next and from step 2 on, so two of each show
// every peak a longer run reaches (stage 1 keeps full gradients from two micro-batches on).
constexpr std::int64_t kSimulatedMicroBatches = 2;
constexpr std::int64_t kSimulatedSteps = 2;

Config simulated_config(const Config& config, int world_size, bool record_timeline,
                        RankEstimate& estimate) {
  const BatchSizes sizes = resolve_batch_sizes(config, world_size);
  estimate.micro_batch_size = sizes.micro_batch_size;
  estimate.grad_accum_steps = sizes.grad_accum_steps;
  Config simulated = config;
  simulated.train.micro_batch_size = sizes.micro_batch_size;
  simulated.train.grad_accum_steps = std::min(sizes.grad_accum_steps, kSimulatedMicroBatches);
  simulated.train.global_batch_size =
      sizes.micro_batch_size * simulated.train.grad_accum_steps * world_size;
  simulated.train.steps = kSimulatedSteps;
  // Evaluation (train.eval_every) runs after the last simulated step at least, as after a
  // real run's last; its micro-batches (at most micro_batch_size windows, Note [Validation
  // samples]) repeat like training's, so two full ones per rank show its peak.
  simulated.train.eval_windows = std::min(
      config.train.eval_windows, kSimulatedMicroBatches * sizes.micro_batch_size * world_size);
  simulated.runtime.device_memory_limit_bytes = 0;  // find the peak, refuse nothing
  // The trainer records the meta tracker's timeline, as it records a profiled run's.
  simulated.runtime.memory_profile = record_timeline;
  simulated.runtime.memory_profile_steps = kSimulatedSteps;
  return simulated;
}

// The nodes the estimated world runs on: blocks of options.ranks_per_node ranks, or one.
comm::Topology estimated_topology(int world_size, const EstimateOptions& options) {
  if (options.ranks_per_node <= 0) return comm::Topology::single_node(world_size);
  return comm::Topology::blocks(world_size, std::min(options.ranks_per_node, world_size));
}

// What a meta run of `simulated` fills in: the memory figures (and the checkpoint sizes),
// the bytes moved per step, or both.
struct Figures {
  bool memory = true;
  bool traffic = true;
};

void simulate(const Config& config, const Config& simulated, int world_size, int rank,
              const EstimateOptions& options, Figures figures, RankEstimate& estimate) {
  const std::unique_ptr<DeviceContext> device =
      make_meta_device_context(Device{config.runtime.device, 0}, 0);
  // Gloo's scratch is host memory: counted in the rank's tracker on the CPU only (as the
  // rank session counts it).
  MemoryTracker* scratch = options.count_comm_scratch && config.runtime.device == DeviceKind::kCpu
                               ? &device->tracker()
                               : nullptr;
  // A GPU rank's collectives run on NCCL unless comm.backend says gloo (as on a GPU machine,
  // whose build has NCCL); each NCCL communicator holds a few bytes on the device.
  MemoryTracker* nccl =
      config.runtime.device == DeviceKind::kCuda && config.comm.backend != CommBackendKind::kGloo
          ? &device->tracker()
          : nullptr;
  comm::MetaCommunicator control(rank, world_size, scratch, nccl);
  comm::MetaCommunicator parameters(rank, world_size, scratch, nccl);
  comm::MetaCommunicator gradients(rank, world_size, scratch, nccl);
  const comm::Topology topology = estimated_topology(world_size, options);
  estimate.node_count = topology.node_count();
  engine::check_groups_fit_nodes(config, topology);  // as every rank of such a job would
  for (comm::Communicator* lane :
       std::initializer_list<comm::Communicator*>{&control, &parameters, &gradients}) {
    lane->place_ranks(topology.nodes_by_rank());
  }

  engine::TrainingParts parts;
  parts.model = options.make_model ? options.make_model() : engine::make_model(simulated);
  parts.source = std::make_unique<ShapeOnlySource>(simulated);
  if (simulated.train.eval_every > 0)
    parts.validation = std::make_unique<ShapeOnlySource>(simulated);
  parts.targets_are_tokens = is_language_model(simulated.model.type);
  estimate.parameters = parts.model.parameter_count();
  check_estimable(config, parts.model, world_size, estimate.micro_batch_size);

  std::vector<std::int64_t> copied_after_step;
  engine::TrainerOptions trainer_options = engine::quiet_trainer_options();
  trainer_options.on_step = [&](const engine::StepMetrics&) {
    copied_after_step.push_back(meta_stream_copy_bytes(*device));
  };
  engine::Trainer trainer(simulated, std::move(parts), {control, parameters, gradients}, *device,
                          std::move(trainer_options));
  const engine::TrainResult result = trainer.run();

  if (figures.traffic) {
    const engine::StepMetrics& last = result.metrics.back();
    estimate.comm_bytes_per_step = last.all_reduce_bytes + last.reduce_scatter_bytes +
                                   last.all_gather_bytes + last.all_to_all_bytes;
    estimate.intra_node_bytes_per_step = static_cast<std::int64_t>(last.intra_node_bytes);
    estimate.cross_node_bytes_per_step = static_cast<std::int64_t>(last.cross_node_bytes);
    estimate.offload_bytes_per_step = copied_after_step.back() - copied_after_step.front();
  }
  if (!figures.memory) return;
  estimate.memory = trainer.memory_snapshot();
  if (options.record_timeline) estimate.timeline = device->tracker().timeline();
  estimate.after_first_step = result.memory_after_first_step;
  const zero::ZeroStrategy& strategy = trainer.strategy();
  const zero::StateShard shard = strategy.state_shard();
  const int tensors = 1 + optim::make_optimizer(simulated.optimizer)->states_per_element() +
                      static_cast<int>(strategy.extra_state_names().size());
  estimate.checkpoint_file_bytes = static_cast<std::int64_t>(checkpoint::rank_file_bytes(
      static_cast<std::int64_t>(shard.runs.size()), shard.numel, tensors));
  estimate.checkpoint_save_host_bytes = std::int64_t{4} * tensors * shard.numel;
  estimate.checkpoint_load_host_bytes = std::int64_t{4} * tensors * strategy.load_shard().numel;
}

}  // namespace

RankEstimate estimate_rank(const Config& config, int world_size, int rank,
                           const EstimateOptions& options) {
  RankEstimate estimate;
  estimate.rank = rank;
  estimate.world_size = world_size;
  const Config simulated = simulated_config(config, world_size, options.record_timeline, estimate);
  if (simulated.train.eval_every == 0) {
    simulate(config, simulated, world_size, rank, options, {}, estimate);
    return estimate;
  }
  // Evaluation's memory is replayed (Note [Evaluation memory]); its gathers and copies are
  // not a training step's, so the bytes per step come from a run without it.
  simulate(config, simulated, world_size, rank, options, {true, false}, estimate);
  Config training_only = simulated;
  training_only.train.eval_every = 0;
  training_only.runtime.memory_profile = false;
  simulate(config, training_only, world_size, rank, options, {false, true}, estimate);
  return estimate;
}

}  // namespace zt::estimate
