// The zerotrain command line: dispatches to the subcommands and maps errors to exit codes
// (2: usage or config, 1: run-time failure), printing `zerotrain: error: ...`.
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "apps/commands.h"
#include "core/error.h"

namespace {

constexpr const char* kUsage = R"(zerotrain: train neural networks sharded ZeRO-style across ranks

usage:
  zerotrain train CONFIG [--set section.key=value]...
  zerotrain launch --nproc-per-node N [--nnodes M --node-rank K] [--master-addr A]
                   [--master-port P] [--status-interval S] [--max-restarts K]
                   CONFIG [--set section.key=value]...
  zerotrain launch --nproc-per-node N [options] -- PROGRAM [ARGS...]
                                        each rank runs PROGRAM (a program using libzerotrain)
  zerotrain estimate CONFIG [--set ...] [--world N] [--nproc-per-node R] [--json]
                                        per-rank memory by category, a table over ZeRO
                                        stages x offload x world sizes, what fits
  zerotrain profile CONFIG [--set ...]  trains runtime.memory_profile_steps steps recording
                                        every allocation; run.dir/memory.html and
                                        memory/rank-K.json (also under `zerotrain launch`:
                                        --set runtime.memory_profile=true)
  zerotrain checkpoint inspect PATH      what a checkpoint holds, every file verified
  zerotrain checkpoint export PATH OUT.safetensors [--dtype fp32|bf16|fp16]
                   [--names zerotrain|hf] [--overwrite]
                                        its full weights, under the model's parameter names
                                        or Hugging Face's (with config.json)
  zerotrain generate [CONFIG] --checkpoint PATH (--prompt TEXT... | --prompts-file FILE)
                   --max-new-tokens N [--temperature T] [--top-k K] [--seed S] [--set ...]
                                        a batch of prompts continued by a checkpoint, a
                                        Hugging Face folder or checkpoint.init_from; any
                                        world size and ZeRO stage (launch ... -- zerotrain
                                        generate)
  zerotrain eval [CONFIG] [--checkpoint PATH] [--data FILE] [--logits FILE.npy] [--set ...]
                                        the validation loss (and logits) of a checkpoint, a
                                        Hugging Face folder or checkpoint.init_from on the
                                        validation windows; any world size (launch ... --
                                        zerotrain eval)
  zerotrain prepare-data IN... OUT.bin [--tokenizer PATH] [--val-fraction F] [--overwrite]
                                        text files (documents) -> a token file for
                                        data.path (byte-level, or BPE in llm.c's format)
  zerotrain diagnose RUN_DIR [--world N]
                                        the ranks' flight records (run.dir/flight) read
                                        together: silent ranks, the first op the ranks
                                        issued differently, the ranks behind and the op
                                        each stopped in
  zerotrain config docs                 print docs/CONFIG.md (every key, generated)
  zerotrain config show CONFIG [--set ...]   print the effective config
  zerotrain --help | --version

`zerotrain COMMAND --help` describes one command.

exit status: 0 success, 1 run-time failure, 2 usage or config error
)";

bool asks_for_help(const zt::apps::Args& args) {
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") return true;
  }
  return false;
}

std::string self_executable(const char* argv0) {
  std::error_code error;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string(argv0) : path.string();
}

int dispatch(int argc, char** argv) {
  if (argc < 2) throw zt::UsageError("no command given; run `zerotrain --help`");
  const std::string command = argv[1];
  const zt::apps::Args args(argv + 2, argv + argc);
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "--version") {
    std::puts("zerotrain 0.1.0");
    return 0;
  }
  // launch's --help is its own (what follows `--` is the rank program's); checkpoint's usage
  // is beside its subcommands.
  if (const char* usage = zt::apps::command_usage(command); usage && asks_for_help(args)) {
    std::fputs(usage, stdout);
    return 0;
  }
  if (command == "train") return zt::apps::train_command(args);
  if (command == "estimate") return zt::apps::estimate_command(args);
  if (command == "profile") return zt::apps::profile_command(args);
  if (command == "checkpoint") return zt::apps::checkpoint_command(args);
  if (command == "launch") return zt::apps::launch_command(args, self_executable(argv[0]));
  if (command == "config") return zt::apps::config_command(args);
  if (command == "prepare-data") return zt::apps::prepare_data_command(args);
  if (command == "generate") return zt::apps::generate_command(args);
  if (command == "eval") return zt::apps::eval_command(args);
  if (command == "diagnose") return zt::apps::diagnose_command(args);
  throw zt::UsageError("unknown command '" + command + "'; run `zerotrain --help`");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return dispatch(argc, argv);
  } catch (const zt::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "zerotrain: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "zerotrain: error: %s\n", e.what());
    return zt::kExitRuntime;
  }
}
