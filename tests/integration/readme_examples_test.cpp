// README's "Using it" block, every command as written and in order, in a fresh copy of the
// repository's files (no runs/ yet): each must succeed, so no example collides with an
// earlier one's run.dir or needs a file the block does not make.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/program_run.h"
#include "support/temp_dir.h"
#include "support/test_paths.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

// The commands of the first ```sh block after `heading` in README.md (a trailing backslash
// joins a command's lines).
std::vector<std::string> readme_commands(const std::string& heading) {
  std::ifstream readme(testing::source_dir() + "/README.md");
  std::vector<std::string> commands;
  bool in_section = false;
  bool in_block = false;
  std::string pending;
  for (std::string line; std::getline(readme, line);) {
    if (!in_section) {
      in_section = line == heading;
    } else if (!in_block) {
      in_block = line == "```sh";
    } else if (line == "```") {
      break;
    } else if (!line.empty() && line.back() == '\\') {
      pending += line.substr(0, line.size() - 1);
    } else {
      pending += line;
      if (!pending.empty()) commands.push_back(pending);
      pending.clear();
    }
  }
  return commands;
}

TEST(ReadmeExamples, UsingItRunsAsWrittenInOrderOnAFreshClone) {
  const std::vector<std::string> commands = readme_commands("## Using it");
  ASSERT_GE(commands.size(), 5u) << "README.md has no ```sh block under \"## Using it\"";
  const testing::TempDir clone;
  // What the examples read: the configs and README.md (prepare-data's input); the binary
  // where a build of the clone would put it.
  const fs::path source = testing::source_dir();
  fs::copy(source / "configs", clone / "configs", fs::copy_options::recursive);
  fs::copy(source / "docs", clone / "docs", fs::copy_options::recursive);
  fs::copy_file(source / "README.md", clone / "README.md");
  fs::create_directories(clone / "build" / "default" / "apps");
  fs::create_symlink(fs::absolute(testing::zerotrain_binary()),
                     clone / "build" / "default" / "apps" / "zerotrain");
  int index = 0;
  for (const std::string& command : commands) {
    const testing::ProgramResult result =
        testing::run_program({"bash", "-c", command}, clone.path(),
                             "example-" + std::to_string(++index), {}, std::chrono::seconds(300));
    EXPECT_EQ(result.exit_code, 0) << command << "\n" << result.output();
    if (result.exit_code != 0) break;  // the later examples may need this one's files
  }
}

}  // namespace
}  // namespace zt
