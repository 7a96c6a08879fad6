// `zerotrain prepare-data` streams: a 128 MiB input is tokenized with a peak resident size
// far below the input's (a whole-file read would hold the input and 4 bytes a token).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;

TEST(PrepareDataMemory, LargeInputIsTokenizedInBoundedMemory) {
  const zt::testing::TempDir dir;
  const fs::path input = dir / "big.txt";
  const fs::path output = dir / "big.bin";
  constexpr off_t kInputBytes = off_t{128} << 20;
  {
    // A sparse file of zero bytes: cheap to make, read like any other.
    const int fd = ::open(input.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, kInputBytes), 0);
    ::close(fd);
  }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::execl(ZT_ZEROTRAIN_EXE, ZT_ZEROTRAIN_EXE, "prepare-data", input.c_str(), output.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage {};
  ASSERT_EQ(::wait4(child, &status, 0, &usage), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(fs::file_size(output), static_cast<std::uintmax_t>(kInputBytes) + 32);
  const long peak_kib = usage.ru_maxrss;  // Linux reports KiB
  EXPECT_LT(peak_kib, 48 * 1024) << "peak resident " << peak_kib << " KiB for a 128 MiB input";
}

}  // namespace
