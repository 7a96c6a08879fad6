// Work completion and waiting: on the host, then (device ops) on the consumer stream.
#include "comm/work.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "core/error.h"

namespace zt::comm {

Work::Work(std::uint64_t sequence_number, std::string description,
           std::chrono::milliseconds default_timeout, std::chrono::milliseconds status_interval,
           DeviceStream* consumer)
    : sequence_number_(sequence_number),
      description_(std::move(description)),
      default_timeout_(default_timeout),
      status_interval_(status_interval),
      consumer_(consumer) {}

template <typename Done>
void Work::wait_until(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds timeout,
                      Done done) {
  using Clock = std::chrono::steady_clock;
  // Beyond this a deadline could overflow the clock; nobody waits a month for an op.
  timeout = std::clamp(timeout, std::chrono::milliseconds(0),
                       std::chrono::milliseconds(std::chrono::hours(24 * 30)));
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  auto next_status = start + status_interval_;
  for (;;) {
    const auto until = status_interval_.count() > 0 ? std::min(deadline, next_status) : deadline;
    if (state_cv_.wait_until(lock, until, done)) return;
    const auto now = Clock::now();
    if (now >= deadline) {
      throw TimeoutError(description_ + " did not complete within " +
                         std::to_string(timeout.count()) +
                         " ms (runtime.comm_timeout_s); a peer may be stuck or gone");
    }
    if (now < next_status) continue;  // woken early, neither done nor due
    // The mark passed, not the clock: "5 s" reads the same however late we woke.
    const double waited_s = std::chrono::duration<double>(next_status - start).count();
    while (next_status <= now) next_status += status_interval_;
    lock.unlock();
    std::fprintf(stderr, "zerotrain: %g s of %g s waiting for %s; a peer may be stopped or slow\n",
                 waited_s, std::chrono::duration<double>(timeout).count(), description_.c_str());
    std::fflush(stderr);
    lock.lock();
  }
}

void Work::rethrow_failure() const {
  if (!error_) return;
  try {
    std::rethrow_exception(error_);
  } catch (const TimeoutError& e) {
    throw TimeoutError(description_ + " failed: " + e.what());
  } catch (const InternalError& e) {
    throw InternalError(description_ + " failed: " + e.what());  // a bug stays a bug
  } catch (const std::exception& e) {
    throw CommError(description_ + " failed: " + e.what());
  }
}

void Work::wait() { wait(default_timeout_); }

void Work::wait(std::chrono::milliseconds timeout) {
  DeviceEvent completion;
  {
    std::unique_lock lock(mutex_);
    wait_until(lock, timeout, [&] { return completed_ || enqueued_; });
    rethrow_failure();
    completion = completion_;
  }
  // Outside the lock: on an inline (CPU) stream this blocks until the event completes. A
  // host op leaves nothing on a device to wait for.
  if (consumer_ != nullptr && completion.impl() != nullptr) consumer_->wait(completion);
}

void Work::synchronize() { synchronize(default_timeout_); }

void Work::synchronize(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  wait_until(lock, timeout, [&] { return completed_; });
  rethrow_failure();
}

bool Work::is_completed() const {
  std::lock_guard lock(mutex_);
  return completed_;
}

DeviceEvent Work::completion_event() const {
  std::lock_guard lock(mutex_);
  return completion_;
}

void Work::mark_enqueued(DeviceEvent completion) {
  {
    std::lock_guard lock(mutex_);
    ZT_CHECK(!enqueued_ && !completed_, description_ + " enqueued twice or after completing");
    enqueued_ = true;
    completion_ = std::move(completion);
  }
  state_cv_.notify_all();
}

void Work::mark_completed(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    completed_ = true;
    error_ = std::move(error);
  }
  state_cv_.notify_all();
}

}  // namespace zt::comm
