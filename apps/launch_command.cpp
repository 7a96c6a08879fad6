// `zerotrain launch --nproc-per-node N [--nnodes M --node-rank K] [--master-addr A]
//  [--master-port P] CONFIG [--set ...]`: validates the config once, then runs the launcher.
#include <charconv>
#include <string>

#include "apps/commands.h"
#include "core/config/config_loader.h"
#include "core/error.h"
#include "runtime/launch/launcher.h"

namespace zt::apps {
namespace {

int parse_count(const std::string& flag, const std::string& value, int min, int max) {
  int result = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), result);
  if (ec != std::errc() || ptr != value.data() + value.size() || result < min || result > max) {
    throw UsageError(flag + " expects an integer in [" + std::to_string(min) + ", " +
                     std::to_string(max) + "], got '" + value + "'");
  }
  return result;
}

}  // namespace

int launch_command(const Args& args, const std::string& self_path) {
  launch::LaunchOptions options;
  options.nproc_per_node = 0;
  Args rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(arg + " needs a value");
      return args[++i];
    };
    if (arg == "--nproc-per-node") {
      options.nproc_per_node = parse_count(arg, value(), 1, 1024);
    } else if (arg == "--nnodes") {
      options.nnodes = parse_count(arg, value(), 1, 65536);
    } else if (arg == "--node-rank") {
      options.node_rank = parse_count(arg, value(), 0, 65535);
    } else if (arg == "--master-addr") {
      options.master_addr = value();
    } else if (arg == "--master-port") {
      options.master_port = parse_count(arg, value(), 0, 65535);
    } else {
      rest.push_back(arg);
    }
  }
  if (options.nproc_per_node == 0) throw UsageError("launch needs --nproc-per-node N");
  if (options.node_rank >= options.nnodes) {
    throw UsageError("--node-rank " + std::to_string(options.node_rank) +
                     " must be below --nnodes " + std::to_string(options.nnodes));
  }
  const ConfigArgs config_args = parse_config_args(rest, 0);
  // Refuse a bad config here, once, rather than in every rank.
  (void)load_config_file(config_args.path, config_args.overrides);
  options.rank_command = {self_path, "train", config_args.path};
  for (const auto& override_text : config_args.overrides) {
    options.rank_command.push_back("--set");
    options.rank_command.push_back(override_text);
  }
  return launch::run_launcher(options);
}

}  // namespace zt::apps
