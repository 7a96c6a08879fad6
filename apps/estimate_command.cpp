// `zerotrain estimate CONFIG [--set k=v]... [--world N] [--nproc-per-node R] [--json]`: the
// memory estimator's report (runtime/estimate), allocating no model memory.
#include <cstdio>

#include "apps/commands.h"
#include "core/config/config_loader.h"
#include "core/error.h"
#include "runtime/estimate/estimate_table.h"

namespace zt::apps {
namespace {

constexpr int kLargestWorld = 1 << 20;

}  // namespace

int parse_rank_count(const std::string& flag, const std::string& text) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || value < 1 || value > kLargestWorld) {
    throw UsageError(flag + ": expected a number of ranks from 1 to " +
                     std::to_string(kLargestWorld) + ", got '" + text + "'");
  }
  return static_cast<int>(value);
}

int estimate_command(const Args& args) {
  int world_size = 1;
  estimate::EstimateOptions options;  // ranks_per_node 0: one node unless --nproc-per-node
  bool json = false;
  Args rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") {
      json = true;
    } else if (args[i] == "--world") {
      if (i + 1 >= args.size()) throw UsageError("--world needs a number of ranks");
      world_size = parse_rank_count("--world", args[++i]);
    } else if (args[i].rfind("--world=", 0) == 0) {
      world_size = parse_rank_count("--world", args[i].substr(8));
    } else if (args[i] == "--nproc-per-node") {
      if (i + 1 >= args.size()) throw UsageError("--nproc-per-node needs a number of ranks");
      options.ranks_per_node = parse_rank_count("--nproc-per-node", args[++i]);
    } else if (args[i].rfind("--nproc-per-node=", 0) == 0) {
      options.ranks_per_node = parse_rank_count("--nproc-per-node", args[i].substr(17));
    } else {
      rest.push_back(args[i]);
    }
  }
  const ConfigArgs config_args = parse_config_args(rest, 0);
  const Config config = load_config_file(config_args.path, config_args.overrides);
  const estimate::EstimateReport report = estimate::estimate_report(config, world_size, options);
  const std::string text =
      json ? estimate::report_json(report, config) : estimate::report_text(report, config);
  std::fputs(text.c_str(), stdout);
  // A script can tell "nothing fits" from a report: exit 1 (the report says why).
  return report.limit_bytes > 0 && !report.cheapest ? 1 : 0;
}

}  // namespace zt::apps
