// `zerotrain launch --nproc-per-node N [--nnodes M --node-rank K] [--master-addr A]
//  [--master-port P] [--status-interval S] CONFIG [--set ...]`: validates the config once,
// then runs the launcher on `zerotrain train`; or `... -- PROGRAM [ARGS...]`: runs the
// launcher on the user's program (a program built on the library, as torchrun runs a script).
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "core/config/batch_size.h"
#include "core/config/config_loader.h"
#include "core/error.h"
#include "runtime/checkpoint/checkpoint_directory.h"
#include "runtime/engine/flight_diagnosis.h"
#include "runtime/launch/launcher.h"

namespace zt::apps {
namespace {

constexpr const char* kLaunchUsage =
    R"(usage: zerotrain launch --nproc-per-node N [options] CONFIG [--set section.key=value]...
       zerotrain launch --nproc-per-node N [options] -- PROGRAM [ARGS...]

Starts N ranks of `zerotrain train CONFIG` on this node, relays their output prefixed
"[rank k] ", and stops them all when one fails. Every option also takes the form
--name=value.

After `--`, each rank runs PROGRAM ARGS... instead (a program linking libzerotrain, or any
program): PROGRAM is started as given (a name without a slash is looked up in PATH), with
the same rank variables as `zerotrain train` gets (RANK, WORLD_SIZE, LOCAL_RANK,
LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, ZEROTRAIN_STORE_TOKEN). The launcher reads no
config then, so on node 0 of several it waits the default 300 s for every rank to join
(a config's runtime.comm_timeout_s sets this otherwise).

options:
  --nproc-per-node N    ranks on this node (required)
  --nnodes M            nodes in the job (default 1); start one launcher per node
  --node-rank K         this node's number, 0..M-1 (default 0); node 0 hosts the store
  --master-addr A       node 0's address as every node reaches it (default 127.0.0.1);
                        node 0's store listens on exactly this address
  --master-port P       the store's port (default 0 on node 0: pick a free one and print
                        it); required on the other nodes
  --status-interval S   say every S seconds what is awaited: ranks stopped (SIGSTOP, a
                        debugger) and, on node 0 of several, ranks that have not joined
                        (default 5)
  --max-restarts K      when a rank fails (exit 1, a signal), stop the others and start
                        every rank again, up to K times (default 0; one node only); with
                        CONFIG each restart resumes from the newest complete checkpoint
                        in checkpoint.dir (checkpoint.resume = "latest"); after `--` the
                        program is started again as it was (ZEROTRAIN_RESTART_COUNT tells
                        it which attempt it is)

The other nodes need node 0's ZEROTRAIN_STORE_TOKEN: export the same value on every node,
or copy the one node 0 prints.

Flight records (CONFIG only): when a rank fails, or the launcher gets SIGINT, SIGTERM or
SIGHUP, the ranks write their last collectives to run.dir/flight/rank-N.json as they stop,
and the launcher prints what `zerotrain diagnose run.dir` finds in them (the ranks behind,
the op each stopped in, the first op two ranks issued differently). `kill -USR1` to the
launcher asks every rank for its record while the run goes on, and prints the same verdict.

exit status: 0 success, 1 run-time failure (also a PROGRAM that cannot start), 2 usage or
config error (also when the ranks failed on one: a rank that exits 2)
)";

int parse_count(const std::string& flag, const std::string& value, int min, int max) {
  int result = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), result);
  if (ec != std::errc() || ptr != value.data() + value.size() || result < min || result > max) {
    throw UsageError(flag + " expects an integer in [" + std::to_string(min) + ", " +
                     std::to_string(max) + "], got '" + value + "'");
  }
  return result;
}

std::chrono::milliseconds parse_seconds(const std::string& flag, const std::string& value) {
  double seconds = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc() || ptr != value.data() + value.size() || !std::isfinite(seconds) ||
      seconds <= 0 || seconds > 86400) {
    throw UsageError(flag + " expects seconds in (0, 86400], got '" + value + "'");
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000.0)));
}

// One launcher option: its name and, for "--name=value", the value given with it.
struct Flag {
  std::string name;
  std::optional<std::string> inline_value;
};

Flag split_flag(const std::string& arg) {
  const std::size_t equals = arg.find('=');
  if (arg.rfind("--", 0) != 0 || equals == std::string::npos) return {arg, std::nullopt};
  return {arg.substr(0, equals), arg.substr(equals + 1)};
}

bool is_help(const std::string& arg) { return arg == "--help" || arg == "-h"; }

}  // namespace

int launch_command(const Args& args, const std::string& self_path) {
  launch::LaunchOptions options;
  options.nproc_per_node = 0;
  Args rest;
  std::optional<Args> program;  // the words after `--`: each rank's command
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      program.emplace(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (is_help(args[i])) {
      std::fputs(kLaunchUsage, stdout);
      return 0;
    }
    const Flag flag = split_flag(args[i]);
    const auto value = [&]() -> std::string {
      if (flag.inline_value) return *flag.inline_value;
      if (i + 1 >= args.size()) throw UsageError(flag.name + " needs a value");
      return args[++i];
    };
    if (flag.name == "--nproc-per-node") {
      options.nproc_per_node = parse_count(flag.name, value(), 1, 1024);
    } else if (flag.name == "--nnodes") {
      options.nnodes = parse_count(flag.name, value(), 1, 65536);
    } else if (flag.name == "--node-rank") {
      options.node_rank = parse_count(flag.name, value(), 0, 65535);
    } else if (flag.name == "--master-addr") {
      options.master_addr = value();
    } else if (flag.name == "--master-port") {
      options.master_port = parse_count(flag.name, value(), 0, 65535);
    } else if (flag.name == "--status-interval") {
      options.status_interval = parse_seconds(flag.name, value());
    } else if (flag.name == "--max-restarts") {
      options.max_restarts = parse_count(flag.name, value(), 0, 1000);
    } else {
      rest.push_back(args[i]);  // CONFIG and --set, for parse_config_args
    }
  }
  if (options.nproc_per_node == 0) {
    throw UsageError("launch needs --nproc-per-node N (see `zerotrain launch --help`)");
  }
  if (options.node_rank >= options.nnodes) {
    throw UsageError("--node-rank " + std::to_string(options.node_rank) +
                     " must be below --nnodes " + std::to_string(options.nnodes));
  }
  if (program) {
    if (program->empty()) {
      throw UsageError("`--` must be followed by the program each rank runs: -- PROGRAM [ARGS...]");
    }
    if (!rest.empty()) {
      throw UsageError("unexpected argument '" + rest.front() +
                       "' before `--` (a CONFIG goes without `-- PROGRAM`, not with it)");
    }
    options.rank_command = *program;
    return launch::run_launcher(options);
  }
  const ConfigArgs config_args = parse_config_args(rest, 0);
  // Refuse a bad config here, once, rather than in every rank; the batch sizes need the
  // world size, which is known here too.
  const Config config = load_config_file(config_args.path, config_args.overrides);
  (void)resolve_batch_sizes(config, static_cast<std::int64_t>(options.nnodes) *
                                        static_cast<std::int64_t>(options.nproc_per_node));
  options.rendezvous_timeout = std::chrono::milliseconds(
      static_cast<std::int64_t>(std::ceil(config.runtime.comm_timeout_s * 1000.0)));
  options.rank_command = {self_path, "train", config_args.path};
  for (const auto& override_text : config_args.overrides) {
    options.rank_command.push_back("--set");
    options.rank_command.push_back(override_text);
  }
  // After a failure, a stop signal or SIGUSR1: what the ranks' flight records say, as
  // `zerotrain diagnose run.dir` would (this node's view when run.dir is not shared).
  options.flight_verdict = [run_dir = std::filesystem::path(config.run.dir),
                            world = options.nnodes *
                                    options.nproc_per_node](std::filesystem::file_time_type since) {
    return engine::flight_verdict_since(run_dir, world, since);
  };
  // A restart continues from the newest checkpoint the failed attempt's run left (the run
  // run.dir/run_id names: never another run's), else starts over (replacing that attempt's
  // own outputs in run.dir).
  options.restart_command = [base = options.rank_command, config](int) {
    std::vector<std::string> command = base;
    const std::filesystem::path directory = checkpoint::checkpoint_directory(config);
    if (const std::optional<std::filesystem::path> latest =
            checkpoint::latest_checkpoint_of_run_dir(config)) {
      std::fprintf(stderr, "zerotrain launch: resuming from the newest checkpoint, %s\n",
                   latest->string().c_str());
      command.insert(command.end(), {"--set", "checkpoint.resume=latest"});
    } else {
      std::fprintf(stderr,
                   "zerotrain launch: no complete checkpoint in '%s' of this run "
                   "(checkpoint.every_steps = %lld): starting over\n",
                   directory.string().c_str(),
                   static_cast<long long>(config.checkpoint.every_steps));
      command.insert(command.end(), {"--set", "run.overwrite=true"});
    }
    return command;
  };
  return launch::run_launcher(options);
}

}  // namespace zt::apps
