// prepare-data and token-file writing lose nothing: non-regular inputs are refused before a
// byte is read, outputs that are not absent-or-regular (devices, FIFOs, directories,
// symbolic links, the input itself) are refused before a byte is written, and a regular
// output is replaced atomically or not at all, or (refusing) left as it is.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/prepare_data.h"
#include "data/token_file.h"
#include "support/temp_dir.h"

namespace zt::data {
namespace {

namespace fs = std::filesystem;
using zt::testing::TempDir;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <typename F>
std::string io_error_of(F&& f) {
  try {
    f();
  } catch (const IoError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an IoError";
  return {};
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "message: " << (text)

// Nothing but the named entries remains in `dir` (no temp file left behind).
void expect_only(const fs::path& dir, std::vector<std::string> names) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    found.push_back(entry.path().filename().string());
  }
  std::sort(found.begin(), found.end());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(found, names);
}

TEST(PrepareDataSafety, FifoInputIsRefusedBeforeReading) {
  TempDir dir;
  const fs::path fifo = dir / "in.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Reading a FIFO with no writer would block forever: the refusal must come from stat.
  const std::string message = io_error_of([&] { prepare_data(fifo, dir / "out.bin"); });
  EXPECT_CONTAINS(message, fifo.string());
  EXPECT_CONTAINS(message, "FIFO");
  expect_only(dir.path(), {"in.fifo"});
}

TEST(PrepareDataSafety, DeviceAndDirectoryInputsAreRefused) {
  TempDir dir;
  const std::string device = io_error_of([&] { prepare_data("/dev/zero", dir / "out.bin"); });
  EXPECT_CONTAINS(device, "'/dev/zero'");
  EXPECT_CONTAINS(device, "character device");
  const std::string directory = io_error_of([&] { prepare_data(dir.path(), dir / "out.bin"); });
  EXPECT_CONTAINS(directory, "directory");
  expect_only(dir.path(), {});
}

TEST(PrepareDataSafety, OutputThatIsTheInputIsRefusedAndTheInputKept) {
  TempDir dir;
  const fs::path input = dir / "in.txt";
  write_text(input, "precious text");
  const std::string same = io_error_of([&] { prepare_data(input, input); });
  EXPECT_CONTAINS(same, "is the input file itself");
  // The same file by another path: a hard link, and a path through "..".
  fs::create_hard_link(input, dir / "link.txt");
  EXPECT_CONTAINS(io_error_of([&] { prepare_data(input, dir / "link.txt"); }),
                  "is the input file itself");
  fs::create_directory(dir / "sub");
  EXPECT_CONTAINS(io_error_of([&] { prepare_data(input, dir / "sub" / ".." / "in.txt"); }),
                  "is the input file itself");
  // Input through a symbolic link, output the real file.
  fs::create_symlink(input, dir / "alias.txt");
  EXPECT_CONTAINS(io_error_of([&] { prepare_data(dir / "alias.txt", input); }),
                  "is the input file itself");
  EXPECT_EQ(read_text(input), "precious text");
  expect_only(dir.path(), {"in.txt", "link.txt", "sub", "alias.txt"});
}

TEST(PrepareDataSafety, DeviceFifoAndDirectoryOutputsAreRefused) {
  TempDir dir;
  const fs::path input = dir / "in.txt";
  write_text(input, "text");
  const std::string null_device = io_error_of([&] { prepare_data(input, "/dev/null"); });
  EXPECT_CONTAINS(null_device, "'/dev/null'");
  EXPECT_CONTAINS(null_device, "character device");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null must stay a device";

  const fs::path fifo = dir / "out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_CONTAINS(io_error_of([&] { prepare_data(input, fifo); }), "FIFO");
  EXPECT_TRUE(fs::is_fifo(fifo));

  fs::create_directory(dir / "out.d");
  EXPECT_CONTAINS(io_error_of([&] { prepare_data(input, dir / "out.d"); }), "a directory");
  EXPECT_TRUE(fs::is_directory(dir / "out.d"));
  expect_only(dir.path(), {"in.txt", "out.fifo", "out.d"});
}

TEST(PrepareDataSafety, SymlinkedOutputIsRefusedAndItsTargetKept) {
  TempDir dir;
  const fs::path input = dir / "in.txt";
  write_text(input, "text");
  write_text(dir / "elsewhere.bin", "someone else's file");
  fs::create_symlink(dir / "elsewhere.bin", dir / "out.bin");
  const std::string message = io_error_of([&] { prepare_data(input, dir / "out.bin"); });
  EXPECT_CONTAINS(message, "symbolic link");
  EXPECT_CONTAINS(message, (dir / "elsewhere.bin").string());
  EXPECT_TRUE(fs::is_symlink(dir / "out.bin"));
  EXPECT_EQ(read_text(dir / "elsewhere.bin"), "someone else's file");
  // A link to the input itself is refused as a link, before anything else.
  fs::create_symlink(input, dir / "loop.bin");
  EXPECT_CONTAINS(io_error_of([&] { prepare_data(input, dir / "loop.bin"); }), "symbolic link");
  EXPECT_EQ(read_text(input), "text");
  expect_only(dir.path(), {"in.txt", "elsewhere.bin", "out.bin", "loop.bin"});
}

TEST(PrepareDataSafety, RegularOutputIsReplacedKeepingItsPermissions) {
  TempDir dir;
  const fs::path input = dir / "in.txt";
  write_text(input, "abc");
  write_text(dir / "out.bin", "old contents");
  fs::permissions(dir / "out.bin",
                  fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  prepare_data(input, dir / "out.bin");
  EXPECT_EQ(TokenFile::open(dir / "out.bin").size(), 3);
  EXPECT_EQ(fs::status(dir / "out.bin").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  expect_only(dir.path(), {"in.txt", "out.bin"});
}

TEST(PrepareDataSafety, FailedRunLeavesTheOldOutputUntouched) {
  TempDir dir;
  write_text(dir / "empty.txt", "");
  write_text(dir / "out.bin", "old contents");
  EXPECT_THROW(prepare_data(dir / "empty.txt", dir / "out.bin"), FormatError);
  EXPECT_EQ(read_text(dir / "out.bin"), "old contents");
  expect_only(dir.path(), {"empty.txt", "out.bin"});
}

TEST(PrepareDataSafety, RefusingLeavesAnExistingOutputAndWritesNothing) {
  TempDir dir;
  write_text(dir / "in.txt", "abc");
  write_text(dir / "out.bin", "old contents");
  const std::string message =
      io_error_of([&] { prepare_data(dir / "in.txt", dir / "out.bin", ExistingOutput::kRefuse); });
  EXPECT_CONTAINS(message, "'" + (dir / "out.bin").string() + "': it already exists");
  EXPECT_CONTAINS(message, "--overwrite");
  EXPECT_EQ(read_text(dir / "out.bin"), "old contents");
  expect_only(dir.path(), {"in.txt", "out.bin"});
}

// A file that appears at the path while the output is written is refused too, not replaced.
TEST(AtomicOutputFileRefusing, NeverReplacesAFileThatAppearedWhileWriting) {
  TempDir dir;
  {
    AtomicOutputFile out(dir / "out.bin", "token file", std::nullopt, ExistingOutput::kRefuse);
    out.write("new", 3);
    write_text(dir / "out.bin", "appeared meanwhile");
    EXPECT_CONTAINS(io_error_of([&] { out.commit(); }), "already exists");
  }
  EXPECT_EQ(read_text(dir / "out.bin"), "appeared meanwhile");
  expect_only(dir.path(), {"out.bin"});
}

TEST(AtomicOutputFileRefusing, CreatesAnAbsentOutput) {
  TempDir dir;
  AtomicOutputFile out(dir / "out.bin", "token file", std::nullopt, ExistingOutput::kRefuse);
  out.write("new", 3);
  out.commit();
  EXPECT_EQ(read_text(dir / "out.bin"), "new");
  expect_only(dir.path(), {"out.bin"});
}

TEST(PrepareDataSafety, StreamsAcrossChunkBoundaries) {
  TempDir dir;
  // Three 1 MiB chunks and a partial one.
  std::string text((std::size_t{3} << 20) + 5, '\0');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>((i * 31u) % 251u);
  write_text(dir / "in.txt", text);
  const PrepareDataStats stats = prepare_data(dir / "in.txt", dir / "out.bin");
  EXPECT_EQ(stats.tokens, static_cast<std::int64_t>(text.size()));
  EXPECT_EQ(stats.distinct_tokens, 251);
  const TokenFile file = TokenFile::open(dir / "out.bin");
  ASSERT_EQ(file.size(), static_cast<std::int64_t>(text.size()));
  for (std::size_t i :
       {std::size_t{0}, (std::size_t{1} << 20) - 1, std::size_t{1} << 20, text.size() - 1}) {
    EXPECT_EQ(file.token(static_cast<std::int64_t>(i)), static_cast<unsigned char>(text[i])) << i;
  }
}

TEST(TokenFileSafety, FifoIsRefusedBeforeReading) {
  TempDir dir;
  const fs::path fifo = dir / "tokens.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string message = io_error_of([&] { TokenFile::open(fifo); });
  EXPECT_CONTAINS(message, fifo.string());
  EXPECT_CONTAINS(message, "FIFO");
}

TEST(TokenFileSafety, WriteRefusesADeviceOutput) {
  const std::string message =
      io_error_of([&] { write_token_file("/dev/null", std::vector<std::int32_t>{1}, 4); });
  EXPECT_CONTAINS(message, "'/dev/null'");
}

}  // namespace
}  // namespace zt::data
