// Note [A record from a terminating rank]: an exception no thread catches still leaves the
// rank's record, with the exception's message, before the process aborts as it would have;
// one handler lives at a time, and the one found at install comes back.
#include "runtime/engine/flight_dump_on_terminate.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

namespace zt::engine {
namespace {

void marker_handler() { std::abort(); }

TEST(FlightDumpOnTerminate, OneAtATimeAndThePreviousHandlerComesBack) {
  const std::terminate_handler before = std::set_terminate(&marker_handler);
  {
    auto first = FlightDumpOnTerminate::install([](const std::string&) {});
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(FlightDumpOnTerminate::install([](const std::string&) {}), nullptr);
    EXPECT_NE(std::get_terminate(), &marker_handler);
  }
  EXPECT_EQ(std::get_terminate(), &marker_handler);
  std::set_terminate(before);
}

TEST(FlightDumpOnTerminate, TheReasonIsTheExceptionsMessageWithGloosSizeCheckExplained) {
  EXPECT_EQ(FlightDumpOnTerminate::reason_of(nullptr), "terminated");
  EXPECT_EQ(FlightDumpOnTerminate::reason_of(std::make_exception_ptr(std::runtime_error("boom"))),
            "terminated by an exception nothing caught: boom");
  const std::string gloo = FlightDumpOnTerminate::reason_of(std::make_exception_ptr(
      std::runtime_error("[enforce fail at pair.cc:510] op.preamble.length <= op.nbytes. 32768 "
                         "vs 1664")));
  EXPECT_NE(gloo.find("32768 vs 1664 (a peer sent more bytes than this rank's op expects"),
            std::string::npos)
      << gloo;
}

TEST(FlightDumpOnTerminateDeathTest, AnExceptionNoThreadCatchesWritesTheRecordThenAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The record goes to stderr here, before the runtime's handler says what was thrown.
  EXPECT_EXIT(
      {
        auto handler = FlightDumpOnTerminate::install([](const std::string& reason) {
          std::fprintf(stderr, "record: %s\n", reason.c_str());
          std::fflush(stderr);
        });
        // Like Gloo's transport loop: a thread of the rank's that catches nothing.
        std::thread([] { throw std::runtime_error("a peer sent 32768 bytes"); }).join();
      },
      ::testing::KilledBySignal(SIGABRT),
      "record: terminated by an exception nothing caught: a peer sent 32768 bytes\n"
      "(.|\n)*terminate called after throwing an instance of 'std::runtime_error'");
}

}  // namespace
}  // namespace zt::engine
