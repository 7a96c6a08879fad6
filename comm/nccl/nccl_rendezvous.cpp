// The GPU placements and the unique id through the store, and the bounded non-blocking
// initialization.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "comm/gpu_placement.h"
#include "comm/nccl/nccl_errors_internal.h"
#include "comm/nccl/nccl_library_internal.h"
#include "comm/nccl/nccl_rendezvous_internal.h"
#include "core/error.h"

namespace zt::comm {
namespace {

using Clock = std::chrono::steady_clock;

// Between polls of a communicator that is still connecting or issuing: short against an
// op, long enough not to keep a core busy.
constexpr std::chrono::microseconds kPollInterval{200};

std::string placement_key(const std::string& key_prefix, int rank) {
  return key_prefix + "nccl_gpu/" + std::to_string(rank);
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

}  // namespace

// Note [One GPU per NCCL rank]
// NCCL refuses two ranks of one communicator on the same GPU, at initialization, with
// ncclInvalidUsage and "Duplicate GPU detected" in its log: nothing that names our keys.
// Two ranks on one GPU is a legitimate wish (a small model, one GPU, testing several ranks),
// which Gloo serves; so before NCCL starts, every rank publishes its host and the GPU's PCI
// bus id (CUDA_VISIBLE_DEVICES renumbers GPUs, the bus id does not) and reads all others'
// (world_size store reads per rank, once per group), and the ranks that share a GPU say
// which and to use comm.backend = "gloo".
void check_one_gpu_per_rank(Store& store, const std::string& key_prefix, int rank, int world_size,
                            int device_index, const std::string& device_name,
                            std::chrono::milliseconds timeout, const std::string& who) {
  char bus_id[64] = {};
  ZT_COMM_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id) - 1, device_index), who);
  store.set(placement_key(key_prefix, rank), placement_text({host_name(), bus_id, device_name}));
  std::vector<std::string> keys;
  for (int r = 0; r < world_size; ++r) keys.push_back(placement_key(key_prefix, r));
  try {
    store.wait(keys, timeout);
  } catch (const TimeoutError&) {
    throw TimeoutError(who + ": not every rank published its GPU (store keys '" +
                       placement_key(key_prefix, 0) + "' and on) within " +
                       std::to_string(timeout.count()) +
                       " ms (runtime.comm_timeout_s); did every rank start?");
  }
  std::vector<GpuPlacement> placements;
  for (const std::string& key : keys) {
    const std::optional<std::string> text = store.try_get(key);
    const std::optional<GpuPlacement> placement = text ? parse_placement(*text) : std::nullopt;
    if (!placement) {
      throw CommError(who + ": store key '" + key + "' does not hold a GPU placement (" +
                      (text ? "'" + *text + "'" : std::string("missing")) +
                      "; another program's key?)");
    }
    placements.push_back(*placement);
  }
  if (const std::optional<std::string> problem = shared_gpu_problem(placements, rank)) {
    throw ConfigError("comm.backend: " + *problem);
  }
}

std::string unique_id_key(const std::string& key_prefix) { return key_prefix + "nccl_unique_id"; }

ncclUniqueId exchange_unique_id(Store& store, const std::string& key_prefix, int rank,
                                std::chrono::milliseconds timeout, const std::string& who) {
  ncclUniqueId id;
  const std::string key = unique_id_key(key_prefix);
  if (rank == 0) {
    ZT_NCCL_CHECK(nccl_library().ncclGetUniqueId(&id), nullptr, who);
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
    const ncclResult_t queried = nccl_library().ncclCommGetAsyncError(comm, &state);
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
  ZT_NCCL_CHECK(nccl_library().ncclCommInitRankConfig(&comm, world_size, copy, rank, &config), comm,
                who);
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
        nccl_library().ncclCommAbort(comm);
        throw CommError(message);
      }
      return comm;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      nccl_library().ncclCommAbort(comm);
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
