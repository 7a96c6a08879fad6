// FlightDumpSignals (Note [Flight records on signals]): SIGUSR1 writes the record and the
// process goes on; SIGTERM writes it and the process still ends killed by SIGTERM; one set of
// handlers per process; the previous handlers come back when it goes.
#include "runtime/engine/flight_dump_signals.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace zt::engine {
namespace {

using namespace std::chrono_literals;

// The reasons the dump was called with, waited for with a bound.
class DumpLog {
 public:
  void add(const std::string& reason) {
    const std::lock_guard lock(mutex_);
    reasons_.push_back(reason);
    changed_.notify_all();
  }
  bool wait_for(std::size_t count, std::chrono::milliseconds bound) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, bound, [&] { return reasons_.size() >= count; });
  }
  std::vector<std::string> reasons() {
    const std::lock_guard lock(mutex_);
    return reasons_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> reasons_;
};

void no_op_handler(int) {}

TEST(FlightDumpSignals, SigUsr1WritesTheRecordAndTheProcessGoesOn) {
  DumpLog log;
  {
    const auto signals = FlightDumpSignals::install([&](const std::string& r) { log.add(r); });
    ASSERT_NE(signals, nullptr);
    ::kill(::getpid(), SIGUSR1);
    ASSERT_TRUE(log.wait_for(1, 10s)) << "no dump within 10 s of SIGUSR1";
    ::kill(::getpid(), SIGUSR1);
    ASSERT_TRUE(log.wait_for(2, 10s)) << "a second SIGUSR1 is served as well";
  }
  const std::vector<std::string> reasons = log.reasons();
  EXPECT_EQ(reasons.size(), 2u);
  EXPECT_EQ(reasons[0].rfind("SIGUSR1", 0), 0u) << reasons[0];
}

TEST(FlightDumpSignals, OneSetOfHandlersAProcessAndThePreviousOnesComeBack) {
  struct sigaction previous {};
  previous.sa_handler = no_op_handler;
  sigemptyset(&previous.sa_mask);
  struct sigaction saved {};
  ::sigaction(SIGUSR1, &previous, &saved);
  {
    const auto first = FlightDumpSignals::install([](const std::string&) {});
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(FlightDumpSignals::install([](const std::string&) {}), nullptr)
        << "a second session's are refused while the first's live";
    struct sigaction now {};
    ::sigaction(SIGUSR1, nullptr, &now);
    EXPECT_NE(now.sa_handler, no_op_handler);
  }
  struct sigaction after {};
  ::sigaction(SIGUSR1, nullptr, &after);
  EXPECT_EQ(after.sa_handler, no_op_handler);
  const auto again = FlightDumpSignals::install([](const std::string&) {});
  EXPECT_NE(again, nullptr) << "free again once the first is gone";
  ::sigaction(SIGUSR1, &saved, nullptr);
}

TEST(FlightDumpSignalsDeathTest, SigTermWritesTheRecordThenEndsTheProcessAsSigTermDoes) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::signal(SIGTERM, SIG_DFL);
        const auto signals = FlightDumpSignals::install([](const std::string& reason) {
          std::fprintf(stderr, "dumped: %s\n", reason.c_str());
          std::fflush(stderr);
        });
        ::kill(::getpid(), SIGTERM);
        // The signal thread writes, then ends the process; a bound in case it never does.
        for (int i = 0; i < 1000; ++i) std::this_thread::sleep_for(10ms);
        std::_Exit(0);
      },
      ::testing::KilledBySignal(SIGTERM), "dumped: SIGTERM");
}

}  // namespace
}  // namespace zt::engine
