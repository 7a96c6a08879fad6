// Work: the handle of one asynchronous collective. The backend completes it (with success
// or the exception its op threw, never lost on the comm thread); wait() rethrows.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>

namespace zt::comm {

class Work {
 public:
  // `description` names the op for errors: "all_reduce #17 (4 MiB f32, sum) on rank 1 of 4".
  // A wait that lasts status_interval (0: no limit) says on stderr which op it waits for,
  // and again after every further interval: a stopped peer shows long before the timeout.
  Work(std::uint64_t sequence_number, std::string description,
       std::chrono::milliseconds default_timeout,
       std::chrono::milliseconds status_interval = std::chrono::milliseconds(0));

  // Blocks until the op completes; rethrows its failure as a CommError naming the op.
  // Throws TimeoutError naming the op when it has not completed within the timeout.
  void wait();
  void wait(std::chrono::milliseconds timeout);
  bool is_completed() const;

  std::uint64_t sequence_number() const { return sequence_number_; }
  const std::string& description() const { return description_; }

  // Backend side: called exactly once, from the thread that ran the op.
  void mark_completed(std::exception_ptr error = nullptr);

 private:
  const std::uint64_t sequence_number_;
  const std::string description_;
  const std::chrono::milliseconds default_timeout_;
  const std::chrono::milliseconds status_interval_;
  mutable std::mutex mutex_;  // guards completed_, error_
  std::condition_variable completed_cv_;
  bool completed_ = false;
  std::exception_ptr error_;
};

}  // namespace zt::comm
