// The unique id through the store, and the bounded non-blocking initialization.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

#include "comm/nccl/nccl_errors_internal.h"
#include "comm/nccl/nccl_rendezvous_internal.h"
#include "core/error.h"

namespace zt::comm {
namespace {

using Clock = std::chrono::steady_clock;

// Between polls of a communicator that is still connecting or issuing: short against an
// op, long enough not to keep a core busy.
constexpr std::chrono::microseconds kPollInterval{200};

}  // namespace

std::string unique_id_key(const std::string& key_prefix) { return key_prefix + "nccl_unique_id"; }

ncclUniqueId exchange_unique_id(Store& store, const std::string& key_prefix, int rank,
                                std::chrono::milliseconds timeout, const std::string& who) {
  ncclUniqueId id;
  const std::string key = unique_id_key(key_prefix);
  if (rank == 0) {
    ZT_NCCL_CHECK(ncclGetUniqueId(&id), nullptr, who);
    store.set(key, std::string(id.internal, sizeof(id.internal)));
    return id;
  }
  std::string bytes;
  try {
    bytes = store.get(key, timeout);
  } catch (const TimeoutError&) {
    throw TimeoutError(who + ": rank 0 never published the NCCL unique id (store key '" + key +
                       "') within " + std::to_string(timeout.count()) +
                       " ms (runtime.comm_timeout_s); is rank 0 running, with the same group?");
  }
  if (bytes.size() != sizeof(id.internal)) {
    throw CommError(who + ": the NCCL unique id under store key '" + key + "' has " +
                    std::to_string(bytes.size()) + " bytes, expected " +
                    std::to_string(sizeof(id.internal)) + " (another program's key?)");
  }
  std::memcpy(id.internal, bytes.data(), sizeof(id.internal));
  return id;
}

ncclResult_t wait_while_in_progress(ncclComm_t comm, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t queried = ncclCommGetAsyncError(comm, &state);
    if (queried != ncclSuccess) return queried;
    if (state != ncclInProgress) return state;
    if (Clock::now() >= deadline) return ncclInProgress;
    std::this_thread::sleep_for(kPollInterval);
  }
}

ncclComm_t init_nccl_comm(const ncclUniqueId& id, int rank, int world_size,
                          std::chrono::milliseconds timeout,
                          std::chrono::milliseconds status_interval, const std::string& who) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclUniqueId copy = id;  // ncclCommInitRankConfig takes it by value
  ZT_NCCL_CHECK(ncclCommInitRankConfig(&comm, world_size, copy, rank, &config), comm, who);
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  for (;;) {
    // Polled in slices so that a slow peer is reported long before the timeout.
    const auto remaining =
        std::max(std::chrono::milliseconds(1),
                 std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    const auto slice =
        status_interval.count() > 0 ? std::min(status_interval, remaining) : remaining;
    const ncclResult_t state = wait_while_in_progress(comm, slice);
    if (state != ncclInProgress) {
      if (state != ncclSuccess) {
        const std::string message = nccl_error_message(state, "ncclCommInitRankConfig", comm, who);
        ncclCommAbort(comm);
        throw CommError(message);
      }
      return comm;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      ncclCommAbort(comm);
      throw TimeoutError(who + ": NCCL initialization did not complete within " +
                         std::to_string(timeout.count()) +
                         " ms (runtime.comm_timeout_s); a peer may not have joined");
    }
    std::fprintf(stderr, "zerotrain: %g s waiting for %s: NCCL initialization\n",
                 std::chrono::duration<double>(now - start).count(), who.c_str());
    std::fflush(stderr);
  }
}

}  // namespace zt::comm
