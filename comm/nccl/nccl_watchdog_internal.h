// NcclWatchdog: watches the NCCL ops that are enqueued on the comm stream until they have
// run. An op completes its Work (and is counted) when its event has; while it runs, the
// watchdog polls the communicator's asynchronous error and the op's timeout, and on either
// aborts the communicator and fails that op, and every op behind it, with the reason.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.h"
#include "comm/flight_recorder.h"
#include "comm/gloo/op_counters.h"
#include "comm/work.h"
#include "core/device/device_stream.h"

namespace zt::comm {

struct InFlightOp {
  std::shared_ptr<Work> work;
  CollectiveKind kind = CollectiveKind::kBarrier;
  // The bytes it sent to each peer (Note [Counting bytes by node]): a ring op's all go to
  // the right-hand neighbour, an all-to-all's a chunk to every peer.
  std::vector<PeerBytes> sent;
  DeviceEvent done;  // recorded on the comm stream after the op (shared by a group's ops)
  std::chrono::steady_clock::time_point enqueued_at;
  // Where the op's end is recorded (Note [The flight recorder]); null: not recorded.
  FlightRecorder* recorder = nullptr;
  std::uint64_t flight_id = 0;

  // The recorder's entry ended: completed (empty `error`) or failed with it.
  void record_end(const std::string& error = {}) const {
    if (recorder != nullptr) recorder->ended(flight_id, error);
  }
};

class NcclWatchdog {
 public:
  // The communicator's asynchronous error, or null while it has none.
  using AsyncError = std::function<std::exception_ptr()>;
  // Aborts the communicator; later ops fail with `broken_reason`. Must not call back in.
  using Abort = std::function<void(const std::string& broken_reason)>;

  // `where` names the device for messages ("cuda:0"). `counters` outlives this.
  NcclWatchdog(std::chrono::milliseconds timeout, std::string where, OpCounters& counters,
               AsyncError async_error, Abort abort);
  NcclWatchdog(const NcclWatchdog&) = delete;
  NcclWatchdog& operator=(const NcclWatchdog&) = delete;
  // Watches what is in flight until it has completed or failed (each bounded by the
  // timeout), then joins its thread.
  ~NcclWatchdog();

  void watch(InFlightOp op);
  // Fails every op in flight with CommError(reason): the communicator was aborted.
  void fail_all(const std::string& reason);

 private:
  void run();
  // Whether `op` has completed (null error and true), failed (the error), or runs on.
  std::exception_ptr check(const InFlightOp& op, bool& completed) const;
  void fail(const InFlightOp& op, const std::exception_ptr& error);

  const std::chrono::milliseconds timeout_;
  const std::string where_;
  OpCounters& counters_;
  const AsyncError async_error_;
  const Abort abort_;
  std::mutex mutex_;  // guards in_flight_, stopping_; Works are completed outside it
  std::condition_variable changed_cv_;
  std::deque<InFlightOp> in_flight_;  // in enqueue order, which is the stream's order
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members above exist
};

}  // namespace zt::comm
