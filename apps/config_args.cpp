// Parsing of CONFIG [--set k=v]... shared by the subcommands.
#include "apps/commands.h"
#include "core/error.h"

namespace zt::apps {

ConfigArgs parse_config_args(const Args& args, std::size_t begin) {
  ConfigArgs result;
  for (std::size_t i = begin; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--set") {
      if (i + 1 >= args.size()) throw UsageError("--set needs section.key=value");
      result.overrides.push_back(args[++i]);
    } else if (arg.rfind("--set=", 0) == 0) {
      result.overrides.push_back(arg.substr(6));
    } else if (!arg.empty() && arg[0] == '-') {
      throw UsageError("unknown option '" + arg + "'");
    } else if (result.path.empty()) {
      result.path = arg;
    } else {
      throw UsageError("unexpected argument '" + arg + "' (one CONFIG file expected)");
    }
  }
  if (result.path.empty()) throw UsageError("missing CONFIG (a TOML file, e.g. configs/tiny.toml)");
  return result;
}

}  // namespace zt::apps
