// Engine: a RankSession (the job, the device, the communicators) with a Trainer on it.
#include "zerotrain/engine.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>

#include "runtime/engine/data_vocabulary.h"
#include "runtime/engine/fault_injection.h"
#include "runtime/engine/model_factory.h"
#include "runtime/engine/rank_session.h"
#include "runtime/engine/trainer.h"
#include "runtime/estimate/estimate_table.h"
#include "runtime/estimate/memory_estimator.h"

namespace zerotrain {
namespace {

// The config with what depends on this rank's place resolved: offload.cpu_threads = 0 means
// this rank's share of the machine's cores.
Config resolved_for(const Config& config, const zt::engine::RankSession& session) {
  Config resolved = config;
  if (resolved.offload.cpu_threads == 0) {
    const auto cores = static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
    resolved.offload.cpu_threads = std::max<std::int64_t>(1, cores / session.local_world_size());
  }
  return resolved;
}

// The config's model without its data (EngineOptions::load_data false): the parts
// training_parts_from_config builds, less the sources.
zt::engine::TrainingParts model_parts_from_config(const Config& given) {
  const Config config = zt::engine::with_data_vocab_size(given);
  zt::engine::TrainingParts parts;
  parts.model = zt::engine::make_model(config);
  parts.targets_are_tokens = zt::is_language_model(config.model.type);
  parts.loss = zt::nn::make_softmax_cross_entropy_loss(
      parts.targets_are_tokens ? zt::engine::data_vocabulary(config.model) : 0);
  return parts;
}

// Error unless every id of every prompt is below `vocab`; each prompt at least one id.
void check_prompts(const std::vector<std::vector<std::int32_t>>& prompts, std::int64_t vocab) {
  if (prompts.empty()) throw zt::Error("generate needs at least one prompt");
  for (std::size_t p = 0; p < prompts.size(); ++p) {
    if (prompts[p].empty()) {
      throw zt::Error("generate: prompt " + std::to_string(p) + " holds no token");
    }
    for (std::size_t i = 0; i < prompts[p].size(); ++i) {
      const std::int32_t id = prompts[p][i];
      if (id < 0 || id >= vocab) {
        throw zt::Error("generate: prompt " + std::to_string(p) + " position " + std::to_string(i) +
                        " holds token id " + std::to_string(id) +
                        ", outside the data's vocabulary [0, " + std::to_string(vocab) + ")");
      }
    }
  }
}

// The tracker's allocations counted under `phase` while this lives.
class PhaseScope {
 public:
  PhaseScope(zt::MemoryTracker& tracker, std::string phase)
      : tracker_(tracker), before_(tracker.phase()) {
    tracker_.set_phase(std::move(phase));
  }
  ~PhaseScope() { tracker_.set_phase(before_); }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  zt::MemoryTracker& tracker_;
  std::string before_;
};

}  // namespace

struct Engine::Impl {
  // `config_model`: the parts are the config's built-ins, which the estimator can rebuild.
  Impl(Engine& self, const Config& config, zt::engine::TrainingParts parts,
       EngineOptions engine_options, bool built_in_model)
      : given_config(config),
        config_model(built_in_model),
        options(std::move(engine_options)),
        session(config, options.write_run_dir) {
    if (built_in_model && config.runtime.device_memory_limit_bytes > 0) {
      // An out-of-memory error ends with what would fit, found by the estimator when the
      // error is built (it allocates nothing of the model).
      session.device().tracker().set_oom_advice(
          [config, world = session.world_size()]() -> std::string {
            try {
              return zt::estimate::fitting_advice(zt::estimate::estimate_report(config, world));
            } catch (const std::exception& e) {
              return std::string("(The estimator could not advise: ") + e.what() + ")";
            }
          });
    }
    zt::engine::TrainerOptions trainer_options;
    trainer_options.write_run_dir = options.write_run_dir;
    trainer_options.show_progress = options.show_progress;
    trainer_options.resume_weights_only = options.resume_weights_only;
    trainer_options.run_directory = session.run_directory();
    trainer_options.fault = zt::engine::fault_plan_from_env();
    trainer_options.end_of_step = [this] { session.check_collectives_step(); };
    if (options.on_step) {
      // The trainer knows the metrics; the user's callback also gets the Engine.
      trainer_options.on_step = [&self, callback = options.on_step](const StepMetrics& metrics) {
        callback(self, metrics);
      };
    }
    trainer = profiled([&] {
      return std::make_unique<zt::engine::Trainer>(resolved_for(config, session), std::move(parts),
                                                   session.lanes(), session.device(),
                                                   trainer_options);
    });
  }

  // The memory profile of this rank: its tracker's timeline and, for the config's own
  // model, the estimator's prediction for the same rank.
  // `with_estimate`: also the estimator's prediction (skipped for an out-of-memory rank).
  zt::engine::RankProfile memory_profile(bool with_estimate) {
    const Config& config = given_config;
    zt::MemoryTracker& tracker = session.device().tracker();
    zt::engine::RankProfile profile;
    profile.rank = session.rank();
    profile.world_size = session.world_size();
    profile.device = session.device().device().to_string();
    profile.capacity_bytes = config.runtime.device_memory_limit_bytes;
    profile.events = tracker.timeline();
    profile.truncated = tracker.timeline_truncated();
    if (config_model && with_estimate) {
      zt::estimate::EstimateOptions estimate_options;
      estimate_options.record_timeline = true;
      zt::estimate::RankEstimate estimate = zt::estimate::estimate_rank(
          given_config, profile.world_size, profile.rank, estimate_options);
      for (zt::MemoryEvent& event : estimate.timeline) {
        if (event.step <= config.runtime.memory_profile_steps) {
          profile.estimate.push_back(std::move(event));
        }
      }
    }
    return profile;
  }

  // Runs `step` (training); a profiling rank that runs out of memory writes its profile so
  // far into run.dir first and says where.
  template <typename Step>
  std::invoke_result_t<Step&> profiled(Step&& step) {
    try {
      return session.explained(step);
    } catch (const zt::OutOfMemoryError& e) {
      if (!given_config.runtime.memory_profile || !options.write_run_dir) throw;
      const zt::engine::RankProfile profile = memory_profile(false);
      const auto path = zt::engine::rank_profile_path(given_config.run.dir, profile.rank).string();
      std::string page;
      try {
        page = zt::engine::write_failed_rank_profile(given_config.run.dir, profile, given_config);
      } catch (const std::exception& write_error) {
        throw zt::OutOfMemoryError(
            std::string(e.what()) +
            "\n  The memory profile could not be written: " + write_error.what());
      }
      memory_profile_page = page;
      throw zt::OutOfMemoryError(std::string(e.what()) + "\n  The memory profile so far is in " +
                                 path + "; the chart of the ranks out of memory is " + page + ".");
    }
  }

  Config given_config;
  bool config_model = false;
  EngineOptions options;
  zt::engine::RankSession session;
  std::unique_ptr<zt::engine::Trainer> trainer;
  std::string memory_summary;
  std::string memory_profile_page;         // rank 0, profiling: run.dir/memory.html
  std::optional<std::int64_t> data_vocab;  // the ids generate() may read and draw, once found
};

namespace {

zt::engine::TrainingParts user_parts(nn::Model model, std::unique_ptr<BatchSource> source,
                                     std::unique_ptr<Loss> loss, const EngineOptions& options) {
  zt::engine::TrainingParts parts;
  parts.model = std::move(model);
  parts.source = std::move(source);
  parts.loss = std::move(loss);
  parts.targets_are_tokens = options.targets_are_tokens;
  return parts;
}

}  // namespace

Engine::Engine(const Config& config, nn::Model model, std::unique_ptr<BatchSource> source,
               std::unique_ptr<Loss> loss, EngineOptions options) {
  zt::engine::TrainingParts parts =
      user_parts(std::move(model), std::move(source), std::move(loss), options);
  impl_ = std::make_unique<Impl>(*this, config, std::move(parts), std::move(options), false);
}

Engine::Engine(const Config& config, EngineOptions options) {
  zt::engine::TrainingParts parts = options.load_data
                                        ? zt::engine::training_parts_from_config(config)
                                        : model_parts_from_config(config);
  impl_ = std::make_unique<Impl>(*this, config, std::move(parts), std::move(options), true);
}

Engine::~Engine() {
  if (!impl_ || impl_->session.finished() || std::uncaught_exceptions() > 0) return;
  try {
    finish();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zerotrain: leaving the job failed: %s\n", e.what());
  }
}

TrainSummary Engine::train() {
  zt::engine::TrainResult result = impl_->profiled([&] { return impl_->trainer->run(); });
  return {std::move(result.losses), std::move(result.metrics)};
}

StepMetrics Engine::step(const Batch& batch) {
  return impl_->profiled([&] { return impl_->trainer->step(batch); });
}

Batch Engine::load_step_batch(const BatchSource& source, std::int64_t step) {
  return impl_->session.explained([&] { return impl_->trainer->load_step_batch(source, step); });
}

double Engine::evaluate(const Batch& batch) {
  return impl_->session.explained([&] { return impl_->trainer->evaluate(batch); });
}

double Engine::validation_loss(const ValidationOutputSink& on_outputs) {
  return impl_->session.explained([&] { return impl_->trainer->validation_loss(on_outputs); });
}

std::vector<std::vector<std::int32_t>> Engine::generate(
    const std::vector<std::vector<std::int32_t>>& prompts, std::int64_t new_tokens,
    const SamplingOptions& sampling) {
  zt::engine::Trainer& trainer = *impl_->trainer;
  const Config& config = trainer.config();
  const bool language_model = impl_->config_model ? zt::is_language_model(config.model.type)
                                                  : impl_->options.targets_are_tokens;
  if (!language_model) {
    throw zt::Error(
        "generate needs a language model (logits over token ids: model.type gpt or llama, or "
        "EngineOptions::targets_are_tokens for a model of your own)");
  }
  if (new_tokens < 1) throw zt::Error("generate: new_tokens must be >= 1");
  if (!(sampling.temperature >= 0) || !std::isfinite(sampling.temperature) || sampling.top_k < 0) {
    throw zt::Error("generate: expected temperature >= 0 (finite) and top_k >= 0");
  }
  if (!impl_->data_vocab) impl_->data_vocab = zt::engine::data_vocab_size(config);
  const std::int64_t vocab = *impl_->data_vocab;
  check_prompts(prompts, vocab);
  return impl_->session.explained([&] {
    // Note [A stream per row]: row r's draws come from stream r of the seed.
    const PhaseScope phase(impl_->session.device().tracker(), "generate");
    zt::engine::ShardedDecoder decoder(trainer.sharded_model(), config.model.seq_len);
    return decoder.generate(prompts, new_tokens, sampling, vocab);
  });
}

void Engine::finish() {
  // A run that made no step (a resume of a run already at train.steps) measured nothing:
  // memory.json and the memory profile stay those of the run that trained. Every rank has
  // the same step count, so all take the same branch of these collectives.
  const zt::engine::Trainer& trainer = *impl_->trainer;
  if (trainer.steps_done() == trainer.resumed_step()) {
    impl_->session.finish_without_memory_report();
    return;
  }
  if (trainer.config().runtime.memory_profile) {
    const std::string page = impl_->session.publish_memory_profile(impl_->memory_profile(true));
    if (!page.empty()) impl_->memory_profile_page = page;
  }
  impl_->memory_summary =
      impl_->session.finish(trainer.memory_after_first_step(), trainer.memory_snapshot(),
                            trainer.model().parameter_count());
}

int Engine::rank() const { return impl_->session.rank(); }
int Engine::world_size() const { return impl_->session.world_size(); }
int Engine::local_rank() const { return impl_->session.local_rank(); }
std::int64_t Engine::steps_done() const { return impl_->trainer->steps_done(); }

std::string Engine::save_checkpoint() { return impl_->trainer->save_checkpoint().string(); }
const Config& Engine::config() const { return impl_->trainer->config(); }
const nn::Model& Engine::model() const { return impl_->trainer->model(); }
std::int64_t Engine::parameter_count() const { return impl_->trainer->model().parameter_count(); }
std::vector<float> Engine::full_parameters() {
  return impl_->trainer->strategy().full_parameters();
}
DeviceContext& Engine::device() { return impl_->session.device(); }
MemoryTracker& Engine::batch_memory() { return impl_->trainer->batch_tracker(); }
const std::string& Engine::memory_summary() const { return impl_->memory_summary; }
const std::string& Engine::memory_profile_page() const { return impl_->memory_profile_page; }

}  // namespace zerotrain
