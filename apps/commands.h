// The zerotrain subcommands; each takes the arguments after its name and returns the exit code.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace zt::apps {

using Args = std::vector<std::string>;

int train_command(const Args& args);
int launch_command(const Args& args, const std::string& self_path);
int config_command(const Args& args);
int prepare_data_command(const Args& args);
int estimate_command(const Args& args);
int profile_command(const Args& args);
int checkpoint_command(const Args& args);
int generate_command(const Args& args);
int eval_command(const Args& args);
int diagnose_command(const Args& args);

// A count of ranks from 1 to 2^20 given to `flag` ("--world", "--nproc-per-node"); throws
// UsageError naming the flag otherwise.
int parse_rank_count(const std::string& flag, const std::string& text);

// A checkpoint given on the command line: PATH itself, or the newest complete checkpoint of
// a checkpoint.dir (said on stderr). CheckpointReader says what is wrong with any other.
std::filesystem::path resolve_checkpoint_path(const std::string& given);

// The `zerotrain COMMAND --help` text of train, estimate, profile, config, prepare-data,
// generate, eval and diagnose;
// nullptr for the others (launch and checkpoint answer --help themselves).
const char* command_usage(const std::string& command);

// CONFIG [--set section.key=value]... as the train and launch commands take them.
struct ConfigArgs {
  std::string path;
  std::vector<std::string> overrides;
};
// Parses config arguments from args[begin...]; throws UsageError on anything else.
ConfigArgs parse_config_args(const Args& args, std::size_t begin);

}  // namespace zt::apps
