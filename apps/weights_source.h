// Where `eval` and `generate` take a model and its weights from: a training CONFIG with a
// checkpoint or checkpoint.init_from, or no CONFIG at all (Note [Weights without a config]).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "zerotrain/engine.h"

namespace zt::apps {

// Note [Weights without a config]
// --checkpoint PATH names the weights: a checkpoint (a step-N directory, or a checkpoint.dir
// whose newest complete checkpoint is taken) or a Hugging Face folder (config.json beside
// model.safetensors or its index: transformers' save_pretrained, or `checkpoint export --names
// hf`). Given a CONFIG, the model is CONFIG's, and the weights load as resume (a checkpoint)
// or as checkpoint.init_from (a folder). Without one, the model comes from the weights: a
// checkpoint's manifest holds its run's effective config (every key, paths absolute), used
// as it is; a folder's config.json gives model.* (hf_model_settings) on top of the defaults,
// and the folder's tokenizer.json, when there is one, becomes data.tokenizer. --set applies
// after either, so `--set model.seq_len=2048` or `--set data.val_path=FILE` adjusts them.
struct WeightsArgs {
  std::string config_path;             // "" when no CONFIG was given
  std::vector<std::string> overrides;  // --set, in order
  std::string weights;                 // --checkpoint; "" = CONFIG's checkpoint.init_from
};

// Splits CONFIG, --set and --checkpoint out of `args`; the command's own options stay in
// `rest`, in order, each of `valued_options` ("--prompt") followed by its value (the others
// are flags, or unknown: the command refuses those). UsageError for a second CONFIG or an
// option without its value.
WeightsArgs parse_weights_args(const std::vector<std::string>& args,
                               const std::vector<std::string>& valued_options,
                               std::vector<std::string>& rest);

// The config the command runs: as the note says, then `command_settings` ("section.key=value",
// the command's own, applied last). `command_settings_for` computes them from the config
// before they apply (so they may depend on it). UsageError when there is neither a CONFIG nor
// --checkpoint, or a CONFIG without weights (no --checkpoint, no checkpoint.init_from).
Config weights_config(
    const WeightsArgs& args,
    const std::function<std::vector<std::string>(const Config&)>& command_settings_for);

// The settings that make a training config an inference run of `command` ("eval",
// "generate"), for weights_config's `command_settings_for`: the weights from --checkpoint (as
// checkpoint.resume; a Hugging Face folder is already checkpoint.init_from) or
// checkpoint.init_from alone, no checkpoint saved, no sample, no memory profile, and a constant
// learning rate (no step uses it; a decaying schedule would warn that the checkpoint's run had
// another train.steps). The global batch is inferred (one micro-batch per rank), so a config
// that fixes train.global_batch_size runs at any world size. UsageError naming `command` when
// there are no weights.
std::vector<std::string> inference_settings(const Config& config, const WeightsArgs& args,
                                            const std::string& command);

// The Engine options of an inference run: run.dir neither claimed nor written, no progress
// line, checkpoint.resume loading weights only (a checkpoint of any global batch: any split),
// the targets tokens for a language model.
zerotrain::EngineOptions inference_engine_options(const Config& config);

}  // namespace zt::apps
