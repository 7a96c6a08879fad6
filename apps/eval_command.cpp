// `zerotrain eval [CONFIG] [--checkpoint PATH] [--data FILE] [--logits FILE.npy [--overwrite]]
// [--set section.key=value]...`: the validation loss of a checkpoint, a Hugging Face folder or
// checkpoint.init_from's weights on the validation windows, alone or as every rank of
// `zerotrain launch ... -- zerotrain eval ...`; with --logits, the windows' logits too.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "apps/eval_logits_file.h"
#include "apps/weights_source.h"
#include "core/error.h"
#include "runtime/engine/data_vocabulary.h"
#include "zerotrain/engine.h"

namespace zt::apps {
namespace {

struct EvalArgs {
  WeightsArgs weights;
  std::string data;                   // --data: the validation token file(s); "" = the config's
  std::optional<std::string> logits;  // --logits FILE
  bool overwrite = false;
};

EvalArgs parse_eval_args(const Args& args) {
  EvalArgs parsed;
  Args rest;
  parsed.weights = parse_weights_args(args, {"--data", "--logits"}, rest);
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == "--data") {
      parsed.data = rest[++i];
    } else if (rest[i] == "--logits") {
      parsed.logits = rest[++i];
      if (parsed.logits->empty()) throw UsageError("eval: --logits needs a FILE");
    } else if (rest[i] == "--overwrite") {
      parsed.overwrite = true;
    } else {
      throw UsageError("eval: unknown option '" + rest[i] + "'");
    }
  }
  if (parsed.overwrite && !parsed.logits) {
    throw UsageError("eval: --overwrite replaces --logits FILE; give --logits too");
  }
  return parsed;
}

// The settings that make a train config an evaluation: an inference run (inference_settings)
// that builds the validation source (it exists only with train.eval_every > 0; no step runs,
// so its value matters only for that). Only train.micro_batch_size matters here, as
// evaluation's micro-batch. --data names the validation tokens (and the training ones, when
// the config has none, so that no synthetic corpus is made for a run that takes no step).
std::vector<std::string> eval_settings(const Config& config, const EvalArgs& args) {
  std::vector<std::string> settings = inference_settings(config, args.weights, "eval");
  if (!args.data.empty()) {
    settings.push_back("data.val_path=" + args.data);
    settings.push_back("data.val_fraction=0");
    if (config.data.path.empty()) settings.push_back("data.path=" + args.data);
  }
  if (config.train.eval_every == 0) settings.push_back("train.eval_every=1");
  return settings;
}

}  // namespace

int eval_command(const Args& args) {
  const EvalArgs eval_args = parse_eval_args(args);
  const Config config = weights_config(
      eval_args.weights, [&](const Config& given) { return eval_settings(given, eval_args); });
  const zerotrain::EngineOptions options = inference_engine_options(config);
  zerotrain::Engine engine(config, options);
  const std::int64_t windows = config.train.eval_windows;
  std::unique_ptr<EvalLogitsFile> logits;
  if (eval_args.logits) {
    const std::int64_t columns =
        options.targets_are_tokens ? engine::data_vocabulary(engine.config().model) : 0;
    logits = std::make_unique<EvalLogitsFile>(
        *eval_args.logits,
        eval_args.overwrite ? data::ExistingOutput::kReplace : data::ExistingOutput::kRefuse,
        engine.rank(), engine.world_size(), windows, columns);
  }
  const double val_loss =
      logits ? engine.validation_loss(
                   [&](const zerotrain::ValidationOutputs& outputs) { logits->write(outputs); })
             : engine.validation_loss();
  if (logits) logits->finish();
  engine.finish();
  if (engine.rank() == 0) {
    const long long shown = static_cast<long long>(windows);
    if (options.targets_are_tokens) {
      std::printf("zerotrain: val_loss %.4f over %lld windows (%lld tokens)\n", val_loss, shown,
                  shown * static_cast<long long>(config.model.seq_len));
    } else {
      std::printf("zerotrain: val_loss %.4f over %lld samples\n", val_loss, shown);
    }
    if (logits) {
      std::string shape;
      for (const std::int64_t extent : logits->shape()) {
        shape += (shape.empty() ? "" : ", ") + std::to_string(extent);
      }
      std::printf("zerotrain: wrote %s: float32 logits (%s)\n", eval_args.logits->c_str(),
                  shape.c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace zt::apps
