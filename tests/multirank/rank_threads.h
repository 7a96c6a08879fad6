// run_ranks: runs one function per rank on threads of this process (the multirank tests'
// stand-in for processes), collects what each rank threw, and bounds how long it may take.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace zt::testing {

inline constexpr std::chrono::seconds kDefaultRankBound{120};

// Runs body(rank) for every rank in [0, world_size), each on its own thread, and returns
// what each rank threw (null where it returned). If the ranks have not all finished within
// `bound`, a collective is hung: print which ranks are stuck and abort, rather than hang
// the suite (a thread cannot be cancelled, and returning would leave it running).
inline std::vector<std::exception_ptr> run_ranks_collect(
    int world_size, const std::function<void(int rank)>& body,
    std::chrono::milliseconds bound = kDefaultRankBound) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(world_size));
  std::vector<bool> finished(static_cast<std::size_t>(world_size), false);
  std::mutex mutex;  // guards finished and finished_count
  std::condition_variable finished_cv;
  int finished_count = 0;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(world_size));
  for (int rank = 0; rank < world_size; ++rank) {
    threads.emplace_back([&, rank] {
      const auto index = static_cast<std::size_t>(rank);
      try {
        body(rank);
      } catch (...) {
        errors[index] = std::current_exception();  // one writer per slot; read after join
      }
      std::lock_guard lock(mutex);
      finished[index] = true;
      ++finished_count;
      finished_cv.notify_all();
    });
  }
  {
    std::unique_lock lock(mutex);
    if (!finished_cv.wait_for(lock, bound, [&] { return finished_count == world_size; })) {
      std::string stuck;
      for (int rank = 0; rank < world_size; ++rank) {
        if (!finished[static_cast<std::size_t>(rank)]) stuck += " " + std::to_string(rank);
      }
      std::fprintf(stderr, "run_ranks: ranks%s of %d still running after %lld ms; aborting\n",
                   stuck.c_str(), world_size, static_cast<long long>(bound.count()));
      std::abort();
    }
  }
  for (auto& thread : threads) thread.join();
  return errors;
}

// Like run_ranks_collect, but rethrows as one runtime_error listing every rank that threw.
inline void run_ranks(int world_size, const std::function<void(int rank)>& body,
                      std::chrono::milliseconds bound = kDefaultRankBound) {
  const auto errors = run_ranks_collect(world_size, body, bound);
  std::string message;
  for (int rank = 0; rank < world_size; ++rank) {
    const auto& error = errors[static_cast<std::size_t>(rank)];
    if (!error) continue;
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      message += "rank " + std::to_string(rank) + ": " + e.what() + "\n";
    } catch (...) {
      message += "rank " + std::to_string(rank) + ": unknown exception\n";
    }
  }
  if (!message.empty()) throw std::runtime_error(message);
}

}  // namespace zt::testing
