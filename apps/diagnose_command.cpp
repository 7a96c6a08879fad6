// `zerotrain diagnose RUN_DIR [--world N]`: the ranks' flight records read together
// (runtime/engine/flight_diagnosis.h), one finding a line.
#include <cstdio>
#include <optional>

#include "apps/commands.h"
#include "core/error.h"
#include "runtime/engine/flight_diagnosis.h"

namespace zt::apps {

int diagnose_command(const Args& args) {
  std::optional<int> world_size;
  std::string run_dir;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--world") {
      if (i + 1 == args.size()) throw UsageError("--world: expected a number of ranks");
      world_size = parse_rank_count("--world", args[++i]);
    } else if (args[i].rfind("--world=", 0) == 0) {
      world_size = parse_rank_count("--world", args[i].substr(8));
    } else if (!args[i].empty() && args[i][0] == '-') {
      throw UsageError("diagnose: unknown option '" + args[i] +
                       "'; run `zerotrain diagnose --help`");
    } else if (run_dir.empty()) {
      run_dir = args[i];
    } else {
      throw UsageError("diagnose takes one RUN_DIR, got '" + run_dir + "' and '" + args[i] + "'");
    }
  }
  if (run_dir.empty()) throw UsageError("diagnose: no RUN_DIR given");
  const std::vector<engine::RankFlightRecord> records = engine::read_flight_records(run_dir);
  std::printf("zerotrain diagnose: %zu flight record%s in %s/flight\n", records.size(),
              records.size() == 1 ? "" : "s", run_dir.c_str());
  for (const std::string& finding : engine::diagnose_flight_records(records, world_size)) {
    std::printf("- %s\n", finding.c_str());
  }
  return 0;
}

}  // namespace zt::apps
