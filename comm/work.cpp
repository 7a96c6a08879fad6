// Work completion and waiting.
#include "comm/work.h"

#include <utility>

#include "core/error.h"

namespace zt::comm {

Work::Work(std::uint64_t sequence_number, std::string description,
           std::chrono::milliseconds default_timeout)
    : sequence_number_(sequence_number),
      description_(std::move(description)),
      default_timeout_(default_timeout) {}

void Work::wait() { wait(default_timeout_); }

void Work::wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!completed_cv_.wait_for(lock, timeout, [&] { return completed_; })) {
    throw TimeoutError(description_ + " did not complete within " +
                       std::to_string(timeout.count()) +
                       " ms (runtime.comm_timeout_s); a peer may be stuck or gone");
  }
  if (error_) {
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
}

bool Work::is_completed() const {
  std::lock_guard lock(mutex_);
  return completed_;
}

void Work::mark_completed(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    completed_ = true;
    error_ = std::move(error);
  }
  completed_cv_.notify_all();
}

}  // namespace zt::comm
