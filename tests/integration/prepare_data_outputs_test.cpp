// `zerotrain prepare-data` as a real process never loses a file the user already has: an
// existing OUT is refused (byte for byte untouched) unless --overwrite is given, --overwrite
// replaces it only with a complete file, and a link or device is refused even then.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/zerotrain_cli.h"

namespace zt {
namespace {

namespace fs = std::filesystem;
using testing::ProgramResult;
using testing::TempDir;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// The names in `dir`, sorted: a temp file left behind would show here.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// An input text and an OUT from an earlier prepare-data (here any bytes) in a folder of
// their own; the commands run (and log) elsewhere.
class PrepareDataOutput : public ::testing::Test {
 protected:
  PrepareDataOutput() {
    write_text(files_ / "in.txt", "new text to tokenize\n");
    write_text(files_ / "out.bin", kEarlier);
  }
  ProgramResult prepare(std::vector<std::string> more, const std::string& name) {
    std::vector<std::string> args{"prepare-data", (files_ / "in.txt").string(), out().string()};
    args.insert(args.end(), more.begin(), more.end());
    return testing::zerotrain(logs_, args, name);
  }
  fs::path out() const { return files_ / "out.bin"; }

  static constexpr const char* kEarlier = "an earlier token file, kept byte for byte";
  const TempDir files_;
  const TempDir logs_;
};

TEST_F(PrepareDataOutput, RefusesAnExistingOutWithoutOverwriteAndLeavesItAsItWas) {
  const ProgramResult run = prepare({}, "refused");
  EXPECT_EQ(run.exit_code, 1) << run.output();
  EXPECT_NE(run.err.find("'" + out().string() + "': it already exists"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("pass --overwrite to replace it, or choose another output path"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(testing::read_text(out()), kEarlier);
  EXPECT_EQ(names_in(files_.path()), (std::vector<std::string>{"in.txt", "out.bin"}));
}

TEST_F(PrepareDataOutput, OverwriteReplacesOutWithTheCompleteFile) {
  const ProgramResult run = prepare({"--overwrite"}, "overwrite");
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_NE(run.out.find("wrote 21 tokens"), std::string::npos) << run.out;
  const std::string written = testing::read_text(out());
  EXPECT_NE(written, kEarlier);
  // The tokens are the input's bytes, at the end of the file after its header.
  ASSERT_GE(written.size(), 21u);
  EXPECT_EQ(written.substr(written.size() - 21), "new text to tokenize\n");
  EXPECT_EQ(names_in(files_.path()), (std::vector<std::string>{"in.txt", "out.bin"}));
}

TEST_F(PrepareDataOutput, AFailureWithOverwriteLeavesTheEarlierOut) {
  write_text(files_ / "in.txt", "");  // empty: refused once the whole input has been read
  const ProgramResult run = prepare({"--overwrite"}, "empty");
  EXPECT_EQ(run.exit_code, 1) << run.output();
  EXPECT_NE(run.err.find("is empty"), std::string::npos) << run.err;
  EXPECT_EQ(testing::read_text(out()), kEarlier);
  EXPECT_EQ(names_in(files_.path()), (std::vector<std::string>{"in.txt", "out.bin"}));
}

TEST_F(PrepareDataOutput, OverwriteStillRefusesALinkOrADevice) {
  fs::create_symlink(out(), files_ / "link.bin");
  const ProgramResult link = testing::zerotrain(
      logs_,
      {"prepare-data", (files_ / "in.txt").string(), (files_ / "link.bin").string(), "--overwrite"},
      "link");
  EXPECT_EQ(link.exit_code, 1) << link.output();
  EXPECT_NE(link.err.find("symbolic link"), std::string::npos) << link.err;
  EXPECT_EQ(testing::read_text(out()), kEarlier);
  EXPECT_TRUE(fs::is_symlink(files_ / "link.bin"));

  const ProgramResult device = testing::zerotrain(
      logs_, {"prepare-data", (files_ / "in.txt").string(), "/dev/null", "--overwrite"}, "device");
  EXPECT_EQ(device.exit_code, 1) << device.output();
  EXPECT_NE(device.err.find("'/dev/null': it is a character device"), std::string::npos)
      << device.err;
  EXPECT_EQ(names_in(files_.path()), (std::vector<std::string>{"in.txt", "link.bin", "out.bin"}));
}

}  // namespace
}  // namespace zt
