// CONFIG, a checkpoint's manifest or a Hugging Face folder's config.json, read into the Config
// that eval and generate run (Note [Weights without a config]).
#include "apps/weights_source.h"

#include <algorithm>
#include <system_error>

#include "apps/commands.h"
#include "core/config/config_loader.h"
#include "core/error.h"
#include "runtime/checkpoint/checkpoint_reader.h"
#include "runtime/checkpoint/hf_config.h"
#include "runtime/checkpoint/hf_model_settings.h"

namespace zt::apps {
namespace {

namespace fs = std::filesystem;

// The text a config is parsed from, what messages call it, and the settings that come from
// the weights (before --set).
struct ConfigBase {
  std::string text;
  std::string source_name;
  bool from_file = false;  // text is empty: source_name is CONFIG's path, read by the loader
  std::vector<std::string> settings;
};

ConfigBase config_base(const WeightsArgs& args) {
  const bool hf = !args.weights.empty() && checkpoint::is_hf_folder(args.weights);
  ConfigBase base;
  if (!args.config_path.empty()) {
    base.source_name = args.config_path;
    base.from_file = true;
    if (hf) base.settings.push_back("checkpoint.init_from=" + args.weights);
    return base;
  }
  if (hf) {
    const fs::path folder = args.weights;
    base.source_name = (folder / checkpoint::kHfConfigName).string();
    base.settings = checkpoint::hf_model_settings(folder / checkpoint::kHfConfigName);
    base.settings.push_back("checkpoint.init_from=" + folder.string());
    std::error_code ec;
    if (fs::is_regular_file(folder / "tokenizer.json", ec)) {
      base.settings.push_back("data.tokenizer=" + (folder / "tokenizer.json").string());
    }
    return base;
  }
  const checkpoint::CheckpointReader reader(resolve_checkpoint_path(args.weights));
  base.text = reader.manifest().config_toml;
  base.source_name = (reader.path() / checkpoint::kManifestName).string();
  return base;
}

Config parse(const ConfigBase& base, const std::vector<std::string>& settings) {
  return base.from_file ? load_config_file(base.source_name, settings)
                        : parse_config_text(base.text, base.source_name, settings);
}

}  // namespace

WeightsArgs parse_weights_args(const std::vector<std::string>& args,
                               const std::vector<std::string>& valued_options,
                               std::vector<std::string>& rest) {
  WeightsArgs parsed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const auto value = [&](const char* what) -> std::string {
      if (i + 1 >= args.size()) throw UsageError(arg + " needs " + what);
      return args[++i];
    };
    if (arg == "--set") {
      parsed.overrides.push_back(value("section.key=value"));
    } else if (arg.rfind("--set=", 0) == 0) {
      parsed.overrides.push_back(arg.substr(6));
    } else if (arg == "--checkpoint") {
      parsed.weights = value("a PATH");
    } else if (arg.rfind("--checkpoint=", 0) == 0) {
      parsed.weights = arg.substr(13);
      if (parsed.weights.empty()) throw UsageError("--checkpoint needs a PATH");
    } else if (!arg.empty() && arg[0] == '-') {
      rest.push_back(arg);
      const bool takes_value =
          std::find(valued_options.begin(), valued_options.end(), arg) != valued_options.end();
      if (takes_value) rest.push_back(value("a value"));
    } else if (parsed.config_path.empty()) {
      parsed.config_path = arg;
    } else {
      throw UsageError("unexpected argument '" + arg + "' (at most one CONFIG file)");
    }
  }
  return parsed;
}

Config weights_config(
    const WeightsArgs& args,
    const std::function<std::vector<std::string>(const Config&)>& command_settings_for) {
  if (args.config_path.empty() && args.weights.empty()) {
    throw UsageError(
        "no model: give --checkpoint PATH (a checkpoint, a checkpoint.dir or a Hugging Face "
        "folder) and, optionally, the training CONFIG");
  }
  const ConfigBase base = config_base(args);
  std::vector<std::string> settings = base.settings;
  settings.insert(settings.end(), args.overrides.begin(), args.overrides.end());
  const Config given = parse(base, settings);
  for (std::string& setting : command_settings_for(given)) settings.push_back(std::move(setting));
  return parse(base, settings);
}

std::vector<std::string> inference_settings(const Config& config, const WeightsArgs& args,
                                            const std::string& command) {
  std::vector<std::string> settings = {"checkpoint.every_steps=0",     "train.sample_every=0",
                                       "runtime.memory_profile=false", "scheduler.type=constant",
                                       "scheduler.warmup_steps=0",     "train.global_batch_size=0",
                                       "train.grad_accum_steps=1"};
  if (!args.weights.empty() && !checkpoint::is_hf_folder(args.weights)) {
    settings.push_back("checkpoint.resume=" + resolve_checkpoint_path(args.weights).string());
    return settings;
  }
  if (config.checkpoint.init_from.empty()) {
    throw UsageError(command +
                     " needs weights: --checkpoint PATH (a step-N checkpoint, a checkpoint.dir "
                     "or a Hugging Face folder), or checkpoint.init_from in CONFIG (Hugging Face "
                     "or exported safetensors)");
  }
  settings.push_back("checkpoint.resume=");
  return settings;
}

zerotrain::EngineOptions inference_engine_options(const Config& config) {
  zerotrain::EngineOptions options;
  options.write_run_dir = false;
  options.show_progress = false;
  options.resume_weights_only = true;
  options.targets_are_tokens = is_language_model(config.model.type);
  return options;
}

}  // namespace zt::apps
