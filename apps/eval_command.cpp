// `zerotrain eval CONFIG [--set section.key=value]... [--checkpoint PATH]`: the validation loss
// of a checkpoint (or of checkpoint.init_from's weights) on the config's validation windows,
// alone or as every rank of `zerotrain launch ... -- zerotrain eval ...`; writes nothing.
#include <cstdio>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "core/config/config_loader.h"
#include "core/error.h"
#include "zerotrain/engine.h"

namespace zt::apps {
namespace {

struct EvalArgs {
  ConfigArgs config;
  std::string checkpoint;  // "" when checkpoint.init_from gives the weights
};

EvalArgs parse_eval_args(const Args& args) {
  EvalArgs parsed;
  Args config_args;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--checkpoint") {
      if (i + 1 >= args.size()) throw UsageError("eval: --checkpoint needs a PATH");
      parsed.checkpoint = args[++i];
    } else if (arg.rfind("--checkpoint=", 0) == 0) {
      parsed.checkpoint = arg.substr(std::string("--checkpoint=").size());
      if (parsed.checkpoint.empty()) throw UsageError("eval: --checkpoint needs a PATH");
    } else {
      config_args.push_back(arg);
    }
  }
  parsed.config = parse_config_args(config_args, 0);
  return parsed;
}

// The settings that make a train config an evaluation: the weights from PATH (or init_from
// alone), no checkpoint saved, the validation source built (it exists only with
// train.eval_every > 0; no step runs, so its value matters only for that), no sample, no
// memory profile, and a constant learning rate (no step uses it; a decaying schedule would
// warn that the checkpoint's run had another train.steps). The global batch is inferred
// (one micro-batch per rank), so a config that fixes train.global_batch_size evaluates at any
// world size: only train.micro_batch_size matters here, as evaluation's micro-batch.
std::vector<std::string> eval_overrides(const Config& config, const std::string& checkpoint) {
  std::vector<std::string> overrides = {"checkpoint.every_steps=0",     "train.sample_every=0",
                                        "runtime.memory_profile=false", "scheduler.type=constant",
                                        "scheduler.warmup_steps=0",     "train.global_batch_size=0",
                                        "train.grad_accum_steps=1"};
  if (!checkpoint.empty()) {
    overrides.push_back("checkpoint.resume=" + resolve_checkpoint_path(checkpoint).string());
  } else {
    if (config.checkpoint.init_from.empty()) {
      throw UsageError(
          "eval needs weights: --checkpoint PATH (a step-N checkpoint or a checkpoint.dir), or "
          "checkpoint.init_from in CONFIG (Hugging Face or exported safetensors)");
    }
    overrides.push_back("checkpoint.resume=");
  }
  if (config.train.eval_every == 0) overrides.push_back("train.eval_every=1");
  return overrides;
}

}  // namespace

int eval_command(const Args& args) {
  EvalArgs eval_args = parse_eval_args(args);
  const Config given = load_config_file(eval_args.config.path, eval_args.config.overrides);
  for (const std::string& setting : eval_overrides(given, eval_args.checkpoint)) {
    eval_args.config.overrides.push_back(setting);
  }
  const Config config = load_config_file(eval_args.config.path, eval_args.config.overrides);
  zerotrain::EngineOptions options;
  options.write_run_dir = false;  // run.dir is neither claimed nor written
  options.show_progress = false;
  options.resume_weights_only = true;  // a checkpoint of any global batch: eval at any split
  options.targets_are_tokens = is_language_model(config.model.type);
  zerotrain::Engine engine(config, options);
  const double val_loss = engine.validation_loss();
  engine.finish();
  if (engine.rank() == 0) {
    const long long windows = static_cast<long long>(config.train.eval_windows);
    if (is_language_model(config.model.type)) {
      std::printf("zerotrain: val_loss %.4f over %lld windows (%lld tokens)\n", val_loss, windows,
                  windows * static_cast<long long>(config.model.seq_len));
    } else {
      std::printf("zerotrain: val_loss %.4f over %lld samples\n", val_loss, windows);
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace zt::apps
