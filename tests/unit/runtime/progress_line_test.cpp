// The progress line keeps run.log_every on a terminal too (only the current step is redrawn
// in place between logged lines), and prints plain lines under a foreign launcher's
// pseudo-terminal.
#include "runtime/engine/progress_line.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace zt::engine {
namespace {

StepMetrics metrics_of(std::int64_t step) {
  StepMetrics m;
  m.step = step;
  m.loss = 1.5;
  m.grad_norm = 0.5;
  m.samples_per_s = 100;
  m.tokens_per_s = 3200;
  m.step_ms = 10;
  return m;
}

// What `ProgressLine` writes over `steps` steps.
std::string progress_output(std::int64_t steps, std::int64_t log_every, bool terminal,
                            std::chrono::milliseconds redraw_interval) {
  std::FILE* out = std::tmpfile();
  EXPECT_NE(out, nullptr);
  if (out == nullptr) return "";
  {
    ProgressLine line(steps, log_every, terminal, redraw_interval, out);
    for (std::int64_t step = 1; step <= steps; ++step) line.update(metrics_of(step));
    line.finish();
  }
  std::string text(static_cast<std::size_t>(std::ftell(out)), '\0');
  std::rewind(out);
  const std::size_t got = std::fread(text.data(), 1, text.size(), out);
  text.resize(got);
  std::fclose(out);
  return text;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(ProgressLine, TerminalKeepsLogEveryWhenNoRedrawIsDue) {
  const std::string text = progress_output(12, 5, true, std::chrono::hours(1));
  EXPECT_EQ(count(text, "  loss "), 4u) << text;  // 1, 5, 10 and the last
  for (const char* step : {"step 1/12 ", "step 5/12 ", "step 10/12 ", "step 12/12 "}) {
    EXPECT_NE(text.find(step), std::string::npos) << step << " missing: " << text;
  }
  EXPECT_EQ(count(text, "\n"), 4u) << "every logged line stays";
}

TEST(ProgressLine, TerminalRedrawsTheStepsBetweenInPlace) {
  const std::string text = progress_output(12, 5, true, std::chrono::milliseconds(0));
  EXPECT_EQ(count(text, "  loss "), 12u) << text;
  EXPECT_EQ(count(text, "\r\033[K"), 12u) << text;
  EXPECT_EQ(count(text, "\n"), 4u) << "only the logged lines stay: " << text;
  EXPECT_NE(text.find("step 2/12 "), std::string::npos) << text;
}

TEST(ProgressLine, LogHasPlainLinesEveryLogEverySteps) {
  const std::string text = progress_output(12, 5, false, std::chrono::milliseconds(0));
  EXPECT_EQ(count(text, "  loss "), 4u) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_EQ(text.find('\033'), std::string::npos) << text;
}

// A pseudo-terminal on stdout redraws, unless a foreign launcher's variables say mpirun or
// srun gave it (its output goes to a log).
TEST(ProgressLine, PseudoTerminalOfAForeignLauncherIsALog) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const int terminal =
      ::open(::ptsname(master), O_RDWR | O_NOCTTY);  // NOLINT(concurrency-mt-unsafe)
  ASSERT_GE(terminal, 0);
  std::fflush(stdout);
  const int saved_stdout = ::dup(STDOUT_FILENO);
  ASSERT_GE(saved_stdout, 0);
  ASSERT_EQ(::dup2(terminal, STDOUT_FILENO), STDOUT_FILENO);
  const bool plain = progress_redraws_in_place();
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);  // NOLINT(concurrency-mt-unsafe)
  const bool under_mpirun = progress_redraws_in_place();
  ::unsetenv("OMPI_COMM_WORLD_SIZE");  // NOLINT(concurrency-mt-unsafe)
  ::setenv("SLURM_PROCID", "0", 1);    // NOLINT(concurrency-mt-unsafe)
  const bool under_srun = progress_redraws_in_place();
  ::unsetenv("SLURM_PROCID");  // NOLINT(concurrency-mt-unsafe)
  ::dup2(saved_stdout, STDOUT_FILENO);
  ::close(saved_stdout);
  ::close(terminal);
  ::close(master);
  EXPECT_TRUE(plain);
  EXPECT_FALSE(under_mpirun);
  EXPECT_FALSE(under_srun);
}

// A sample's line marks where the prompt ends: the prompt and what the model wrote, each
// quoted, around " ▸ " (spaces at the boundary stay inside the quotes; control characters
// escaped).
TEST(ProgressLine, ASampleLineMarksWhereThePromptEnds) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  {
    ProgressLine line(10, 1, false, std::chrono::milliseconds(250), out);
    StepMetrics m = metrics_of(4);
    m.sample = "Once upon\na time there";
    m.sample_prompt = "Once upon\na";
    line.print_sample("greedy, 2 tokens after the first 3 of the validation data", m);
  }
  std::string text(static_cast<std::size_t>(std::ftell(out)), '\0');
  std::rewind(out);
  text.resize(std::fread(text.data(), 1, text.size(), out));
  std::fclose(out);
  EXPECT_EQ(text,
            "sample after step 4 (greedy, 2 tokens after the first 3 of the validation data): "
            "\"Once upon\\na\" \u25b8 \" time there\"\n");
}

TEST(ProgressLine, SampleLineSplitsWhereThePromptEnds) {
  EXPECT_EQ(sample_line("1 2 3", ""), "\"\" \u25b8 \"1 2 3\"");
  EXPECT_EQ(sample_line("1 2 3", "1 2"), "\"1 2\" \u25b8 \" 3\"");
}

}  // namespace
}  // namespace zt::engine
