// The watchdog's polling loop. Only whoever takes an op out of the queue completes its
// Work, so an op never completes twice when an abort and a completion race.
#include <utility>
#include <vector>

#include "comm/nccl/cuda_comm_stream_internal.h"
#include "comm/nccl/nccl_watchdog_internal.h"
#include "core/error.h"

namespace zt::comm {
namespace {

// Between polls of a running op: a completion is seen this late at most.
constexpr std::chrono::microseconds kPollInterval{100};

std::string message_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace

NcclWatchdog::NcclWatchdog(std::chrono::milliseconds timeout, std::string where,
                           OpCounters& counters, AsyncError async_error, Abort abort)
    : timeout_(timeout),
      where_(std::move(where)),
      counters_(counters),
      async_error_(std::move(async_error)),
      abort_(std::move(abort)),
      thread_([this] { run(); }) {}

NcclWatchdog::~NcclWatchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_cv_.notify_all();
  thread_.join();
}

void NcclWatchdog::watch(InFlightOp op) {
  {
    std::lock_guard lock(mutex_);
    in_flight_.push_back(std::move(op));
  }
  changed_cv_.notify_all();
}

void NcclWatchdog::fail_all(const std::string& reason) {
  std::deque<InFlightOp> failed;
  {
    std::lock_guard lock(mutex_);
    failed.swap(in_flight_);
  }
  for (const InFlightOp& op : failed) {
    op.record_end(reason);
    op.work->mark_completed(std::make_exception_ptr(CommError(reason)));
  }
}

std::exception_ptr NcclWatchdog::check(const InFlightOp& op, bool& completed) const {
  completed = false;
  const cudaError_t state = query_event(op.done);
  if (state == cudaSuccess) {
    completed = true;
    return nullptr;
  }
  if (state != cudaErrorNotReady) {
    return std::make_exception_ptr(CommError(std::string("the device failed while it ran (") +
                                             cudaGetErrorString(state) + " on " + where_ + ")"));
  }
  if (std::exception_ptr error = async_error_()) return error;
  if (std::chrono::steady_clock::now() - op.enqueued_at > timeout_) {
    return std::make_exception_ptr(TimeoutError(
        "did not complete on " + where_ + " within " + std::to_string(timeout_.count()) +
        " ms (runtime.comm_timeout_s); a peer may be stuck or gone; the NCCL communicator was "
        "aborted"));
  }
  return nullptr;
}

void NcclWatchdog::fail(const InFlightOp& op, const std::exception_ptr& error) {
  const std::string reason =
      "communicator is broken after " + op.work->description() + " failed: " + message_of(error);
  // Taken out before the abort, whose fail_all would otherwise give `op` the generic
  // reason instead of its own error (and a TimeoutError would stop being one).
  std::deque<InFlightOp> failed;
  {
    std::lock_guard lock(mutex_);
    failed.swap(in_flight_);
  }
  abort_(reason);
  for (const InFlightOp& each : failed) {
    each.record_end(each.work == op.work ? message_of(error) : reason);
    each.work->mark_completed(each.work == op.work ? error
                                                   : std::make_exception_ptr(CommError(reason)));
  }
}

void NcclWatchdog::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (in_flight_.empty()) {
      if (stopping_) return;
      changed_cv_.wait(lock, [&] { return stopping_ || !in_flight_.empty(); });
      continue;
    }
    const InFlightOp front = in_flight_.front();
    lock.unlock();
    bool completed = false;
    const std::exception_ptr error = check(front, completed);
    if (error) {
      fail(front, error);
      lock.lock();
      continue;
    }
    lock.lock();
    if (!completed) {
      changed_cv_.wait_for(lock, kPollInterval);
      continue;
    }
    if (in_flight_.empty() || in_flight_.front().work != front.work) continue;  // failed meanwhile
    in_flight_.pop_front();
    lock.unlock();
    counters_.add(front.kind, front.sent);
    front.record_end();
    front.work->mark_completed();
    lock.lock();
  }
}

}  // namespace zt::comm
