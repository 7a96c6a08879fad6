// `zerotrain config docs` (docs/CONFIG.md from the schema) and
// `zerotrain config show CONFIG [--set ...]` (the effective config, every key).
#include <cstdio>

#include "apps/commands.h"
#include "core/config/config_docs.h"
#include "core/config/config_loader.h"
#include "core/config/config_writer.h"
#include "core/error.h"

namespace zt::apps {

int config_command(const Args& args) {
  if (args.empty()) throw UsageError("config needs a subcommand: docs | show CONFIG");
  if (args[0] == "docs") {
    if (args.size() != 1) throw UsageError("config docs takes no arguments");
    std::fputs(config_reference_markdown().c_str(), stdout);
    return 0;
  }
  if (args[0] == "show") {
    const ConfigArgs config_args = parse_config_args(args, 1);
    std::fputs(config_to_toml(load_config_file(config_args.path, config_args.overrides)).c_str(),
               stdout);
    return 0;
  }
  throw UsageError("unknown config subcommand '" + args[0] + "' (docs | show CONFIG)");
}

}  // namespace zt::apps
