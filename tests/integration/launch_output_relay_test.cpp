// LineRelay on its own: prefixing, partial lines held back until EOF, the bounded tail,
// lines too long to hold split rather than buffered without bound, and an error line held
// back with its indented continuation lines.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "runtime/launch/output_relay.h"

namespace zt::launch::testing {
namespace {

// What a LineRelay writes, captured in an anonymous temporary file.
class CapturedFd {
 public:
  CapturedFd() : file_(std::tmpfile()) { EXPECT_NE(file_, nullptr); }
  ~CapturedFd() { std::fclose(file_); }
  CapturedFd(const CapturedFd&) = delete;
  CapturedFd& operator=(const CapturedFd&) = delete;
  int fd() const { return ::fileno(file_); }
  std::string text() const {
    std::string out;
    std::rewind(file_);
    for (int c; (c = std::fgetc(file_)) != EOF;) out.push_back(static_cast<char>(c));
    return out;
  }

 private:
  std::FILE* file_;
};

TEST(LaunchLineRelay, PrefixesWholeLinesAndHoldsAPartialOneUntilFinish) {
  CapturedFd out;
  LineRelay relay("[rank 2] ", out.fd(), 0);
  relay.feed("alpha\nbe");
  EXPECT_EQ(out.text(), "[rank 2] alpha\n");
  relay.feed("ta\n\ngam");
  EXPECT_EQ(out.text(), "[rank 2] alpha\n[rank 2] beta\n[rank 2] \n");
  relay.feed("ma");
  relay.finish();
  EXPECT_EQ(out.text(), "[rank 2] alpha\n[rank 2] beta\n[rank 2] \n[rank 2] gamma\n");
  relay.finish();  // nothing left to flush
  EXPECT_EQ(out.text(), "[rank 2] alpha\n[rank 2] beta\n[rank 2] \n[rank 2] gamma\n");
  EXPECT_TRUE(relay.tail().empty()) << "a tail of 0 lines keeps none";
}

TEST(LaunchLineRelay, TailKeepsTheLastLinesIncludingAFinishedPartialOne) {
  CapturedFd out;
  LineRelay relay("[rank 0] ", out.fd(), 2);
  relay.feed("one\ntwo\nthree\nfou");
  ASSERT_EQ(relay.tail().size(), 2u);
  EXPECT_EQ(relay.tail()[0], "two");
  EXPECT_EQ(relay.tail()[1], "three");
  relay.finish();
  EXPECT_EQ(relay.tail()[0], "three");
  EXPECT_EQ(relay.tail()[1], "fou");
}

TEST(LaunchLineRelay, ALineWithoutNewlineIsWrittenInBoundedPieces) {
  CapturedFd out;
  LineRelay relay("> ", out.fd(), 0);
  const std::string huge(std::size_t{200} * 1024, 'x');
  relay.feed(huge);
  const std::string text = out.text();
  EXPECT_FALSE(text.empty()) << "200 KiB without a newline were all held back";
  EXPECT_EQ(text.rfind("> ", 0), 0u);
  relay.finish();
  const std::string all = out.text();
  std::size_t xs = 0;
  for (char c : all) xs += c == 'x' ? 1 : 0;
  EXPECT_EQ(xs, huge.size()) << "bytes lost or duplicated";
}

TEST(LaunchLineRelay, AnErrorsIndentedContinuationLinesAreHeldWithIt) {
  CapturedFd out;
  LineRelay relay("[rank 1] ", out.fd(), 4, /*hold_errors=*/true);
  relay.feed("before\nzerotrain: error: out of memory on cpu:1: allocating 3 MiB\n");
  relay.feed("  in use: parameters 12.1 MiB\n    12.1 MiB  parameters\nafter\n  indented\n");
  relay.finish();
  ASSERT_EQ(relay.held_errors().size(), 1u);
  EXPECT_EQ(relay.held_errors()[0],
            "zerotrain: error: out of memory on cpu:1: allocating 3 MiB\n"
            "  in use: parameters 12.1 MiB\n    12.1 MiB  parameters");
  // Only the lines right after the error continue it.
  EXPECT_EQ(out.text(), "[rank 1] before\n[rank 1] after\n[rank 1]   indented\n");
}

}  // namespace
}  // namespace zt::launch::testing
