// `zerotrain COMMAND [SUBCOMMAND] --help` for every command: exit 0 with its usage on
// stdout, before any argument is checked (none is given here).
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "support/zerotrain_cli.h"

namespace zt {
namespace {

using testing::ProgramResult;
using testing::TempDir;

// "checkpoint_export_Help"
std::string test_name(const ::testing::TestParamInfo<std::vector<std::string>>& param) {
  std::string name;
  for (const std::string& word : param.param) {
    for (const char c : word) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    name += '_';
  }
  return name + "Help";
}

class CommandHelp : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(CommandHelp, ExitsZeroPrintingItsUsage) {
  const TempDir dir;
  for (const char* flag : {"--help", "-h"}) {
    std::vector<std::string> args = GetParam();
    args.push_back(flag);
    const ProgramResult run = testing::zerotrain(dir, args, "help");
    EXPECT_EQ(run.exit_code, 0) << args[0] << " " << flag << "\n" << run.output();
    EXPECT_EQ(run.out.rfind("usage: zerotrain " + args[0], 0), 0u) << args[0] << " " << flag << "\n"
                                                                   << run.output();
  }
}

// The top-level usage names every command's options a user reaches for first.
TEST(TopLevelHelp, ListsTheExportAndPrepareDataOptions) {
  const TempDir dir;
  const ProgramResult run = testing::zerotrain(dir, {"--help"}, "help");
  EXPECT_EQ(run.exit_code, 0) << run.output();
  for (const char* option :
       {"--names zerotrain|hf", "--dtype fp32|bf16|fp16", "--tokenizer PATH", "--val-fraction F",
        "--overwrite", "zerotrain eval", "--prompts-file FILE"}) {
    EXPECT_NE(run.out.find(option), std::string::npos) << option << "\n" << run.out;
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryCommand, CommandHelp,
    ::testing::Values(
        std::vector<std::string>{"train"}, std::vector<std::string>{"launch"},
        std::vector<std::string>{"estimate"}, std::vector<std::string>{"profile"},
        std::vector<std::string>{"checkpoint"}, std::vector<std::string>{"checkpoint", "inspect"},
        std::vector<std::string>{"checkpoint", "export"}, std::vector<std::string>{"config"},
        std::vector<std::string>{"config", "docs"}, std::vector<std::string>{"config", "show"},
        std::vector<std::string>{"prepare-data"}, std::vector<std::string>{"eval"},
        std::vector<std::string>{"generate"}),
    test_name);

}  // namespace
}  // namespace zt
