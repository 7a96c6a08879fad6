// Work: the handle of one asynchronous collective. The backend completes it (with success
// or the exception its op threw, never lost on the comm thread); wait() rethrows.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>

#include "core/device/device_stream.h"

namespace zt::comm {

// Note [Waiting on a collective]
// A collective is ordered after everything its rank's compute stream had been given when the
// op was submitted (the communicator records an event there), and runs on the
// communicator's own queue: Gloo's comm thread, or NCCL's comm stream. wait() orders what
// the rank does next after the op:
// - Host ops (Gloo, CPU or staged CUDA tensors): wait() blocks the calling thread until the
//   op has completed, as it always did.
// - Device ops (NCCL): wait() blocks only until the op is enqueued on the comm stream, then
//   makes the compute stream wait for its completion event (cudaStreamWaitEvent), so the
//   host runs ahead and queues the kernels that read the result behind it.
// Either way a buffer the op used may be freed on the host right after wait() returns: the
// device allocator is stream-ordered on the compute stream, so a block freed now is only
// reused by compute-stream work enqueued after the wait, which the device runs after the
// op has finished with it. Reading a device result on the host still goes through a copy
// (DeviceOps::copy), which is ordered on the compute stream too.
// Failures found after a device wait() has returned (an asynchronous NCCL error, a timeout
// while the op runs) complete the Work with the error, abort the communicator, and make
// every later op of it fail at once naming this one; synchronize() waits for the device
// and rethrows them.

class Work {
 public:
  // `description` names the op for errors: "all_reduce #17 (4 MiB f32, sum) on rank 1 of 4".
  // A wait that lasts status_interval (0: no limit) says on stderr which op it waits for,
  // and again after every further interval: a stopped peer shows long before the timeout.
  // `consumer` is the stream wait() orders after the op (the device's compute stream);
  // null: the host only.
  Work(std::uint64_t sequence_number, std::string description,
       std::chrono::milliseconds default_timeout,
       std::chrono::milliseconds status_interval = std::chrono::milliseconds(0),
       DeviceStream* consumer = nullptr);

  // Orders the caller after the op (Note [Waiting on a collective]); rethrows its failure
  // as a CommError naming the op. Throws TimeoutError naming the op when it has not
  // completed (host ops) or been enqueued (device ops) within the timeout.
  void wait();
  void wait(std::chrono::milliseconds timeout);
  // Blocks the host until the op has completed, on the device too; rethrows as wait().
  void synchronize();
  void synchronize(std::chrono::milliseconds timeout);
  // Whether the op has completed (on the device too).
  bool is_completed() const;
  // The event that completes when the op has: recorded on the comm stream for device ops;
  // an already complete event for host ops, and before a device op is enqueued.
  DeviceEvent completion_event() const;

  std::uint64_t sequence_number() const { return sequence_number_; }
  const std::string& description() const { return description_; }

  // Backend side. mark_enqueued: a device op is on the comm stream and `completion` is the
  // event recorded after it (at most once, before mark_completed). mark_completed: exactly
  // once, when the op has finished or failed.
  void mark_enqueued(DeviceEvent completion);
  void mark_completed(std::exception_ptr error = nullptr);

 private:
  // Blocks until `done()` holds (mutex_ held while it is evaluated) or the timeout passes.
  template <typename Done>
  void wait_until(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds timeout, Done done);
  void rethrow_failure() const;  // with mutex_ held

  const std::uint64_t sequence_number_;
  const std::string description_;
  const std::chrono::milliseconds default_timeout_;
  const std::chrono::milliseconds status_interval_;
  DeviceStream* const consumer_;
  mutable std::mutex mutex_;  // guards enqueued_, completed_, error_, completion_
  std::condition_variable state_cv_;
  bool enqueued_ = false;
  bool completed_ = false;
  std::exception_ptr error_;
  DeviceEvent completion_;
};

}  // namespace zt::comm
