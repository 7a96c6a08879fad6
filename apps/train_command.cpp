// `zerotrain train CONFIG [--set section.key=value]...`: the config's model and data on the
// library's Engine, with the run's summary lines.
#include <cmath>
#include <cstdio>

#include "apps/commands.h"
#include "core/config/batch_size.h"
#include "core/config/config_loader.h"
#include "data/markov_corpus.h"
#include "zerotrain/engine.h"

namespace zt::apps {
namespace {

void print_run_header(zerotrain::Engine& engine, const Config& config) {
  const Config& resolved = engine.config();
  std::printf("zerotrain: %s, %lld parameters, %d rank%s, zero.stage %lld, global batch %lld\n",
              engine.model().name().c_str(), static_cast<long long>(engine.parameter_count()),
              engine.world_size(), engine.world_size() == 1 ? "" : "s",
              static_cast<long long>(config.zero.stage),
              static_cast<long long>(resolved.train.global_batch_size));
  const BatchSizes sizes = resolve_batch_sizes(config, engine.world_size());
  if (!sizes.inferred.empty()) std::printf("zerotrain: inferred %s\n", sizes.inferred.c_str());
  if (is_language_model(config.model.type) && config.data.path.empty()) {
    const data::MarkovCorpus corpus(static_cast<std::uint64_t>(config.run.seed),
                                    static_cast<std::int32_t>(config.model.vocab_size),
                                    config.data.synthetic_peakedness);
    std::printf(
        "zerotrain: synthetic Markov corpus: entropy rate %.4f nats/token (the loss "
        "floor; log vocab_size = %.4f)\n",
        corpus.entropy_rate_nats(), std::log(static_cast<double>(config.model.vocab_size)));
  }
  std::fflush(stdout);
}

// A resume of a run that already made train.steps steps (a requeued job that had finished):
// nothing to do, which is a success.
int finish_trained_run(zerotrain::Engine& engine, const Config& config) {
  if (engine.rank() == 0) {
    std::printf(
        "zerotrain: nothing left to train: the checkpoint is at step %lld and train.steps = "
        "%lld (raise train.steps to train further)\n",
        static_cast<long long>(engine.steps_done()), static_cast<long long>(config.train.steps));
    std::fflush(stdout);
  }
  engine.finish();
  return 0;
}

}  // namespace

int train_command(const Args& args) {
  const ConfigArgs config_args = parse_config_args(args, 0);
  const Config config = load_config_file(config_args.path, config_args.overrides);
  zerotrain::EngineOptions options;
  options.targets_are_tokens = is_language_model(config.model.type);
  zerotrain::Engine engine(config, options);
  if (engine.rank() == 0) print_run_header(engine, config);
  if (engine.steps_done() >= config.train.steps) return finish_trained_run(engine, config);
  const zerotrain::TrainSummary summary = engine.train();
  engine.finish();
  if (engine.rank() == 0) {
    std::printf(
        "zerotrain: done: loss %.4f -> %.4f after %lld steps; peak memory %s; metrics in "
        "%s/metrics.jsonl, memory in %s/memory.json\n",
        summary.losses.front(), summary.losses.back(),
        static_cast<long long>(summary.losses.size()), engine.memory_summary().c_str(),
        config.run.dir.c_str(), config.run.dir.c_str());
    if (!engine.memory_profile_page().empty()) {
      std::printf("zerotrain: memory profile: %s (and %s/memory/rank-K.json)\n",
                  engine.memory_profile_page().c_str(), config.run.dir.c_str());
    }
  }
  return 0;
}

int profile_command(const Args& args) {
  // A profile, not a training run: runtime.memory_profile_steps steps with the timeline on.
  const ConfigArgs config_args = parse_config_args(args, 0);
  const Config config = load_config_file(config_args.path, config_args.overrides);
  Args train_args = args;
  for (const std::string& setting :
       {std::string("runtime.memory_profile=true"),
        "train.steps=" + std::to_string(config.runtime.memory_profile_steps)}) {
    train_args.push_back("--set");
    train_args.push_back(setting);
  }
  return train_command(train_args);
}

}  // namespace zt::apps
