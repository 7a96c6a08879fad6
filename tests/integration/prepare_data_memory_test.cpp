// `zerotrain prepare-data` streams: a 128 MiB input is tokenized with a peak resident size
// far below the input's (a whole-file read would hold the input and 4 bytes a token). The
// bound is on what tokenizing adds to the resident size of a zerotrain that only starts
// (`zerotrain --help`): with the CUDA backend built in, loading cuBLAS, cuBLASLt and NCCL
// alone makes about 200 MiB of library pages resident, whatever the input.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/temp_dir.h"
#include "support/test_paths.h"

namespace {

namespace fs = std::filesystem;

// Runs zerotrain with `args` (stdout to /dev/null) and returns its peak resident KiB.
long peak_resident_kib(const std::vector<std::string>& args) {
  const std::string program = zt::testing::zerotrain_binary();  // before fork: no allocation after
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage {};
  EXPECT_EQ(::wait4(child, &status, 0, &usage), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  return usage.ru_maxrss;  // Linux reports KiB
}

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
  const long started_kib = peak_resident_kib({"--help"});
  const long peak_kib = peak_resident_kib({"prepare-data", input.string(), output.string()});
  EXPECT_EQ(fs::file_size(output), static_cast<std::uintmax_t>(kInputBytes) + 32);
  EXPECT_LT(peak_kib - started_kib, 48 * 1024)
      << "peak resident " << peak_kib << " KiB for a 128 MiB input, " << started_kib
      << " KiB for zerotrain --help";
}

}  // namespace
