// Creating a rank's communicator: Gloo over TCP (host tensors, and CUDA tensors staged
// through pinned host memory) or NCCL (CUDA tensors), rendezvousing through a Store. The
// only way code outside comm/ gets a Communicator; no Gloo or NCCL type appears here.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "comm/collective_check.h"
#include "comm/communicator.h"
#include "comm/flight_recorder.h"
#include "comm/skipping_communicator.h"
#include "comm/store/store.h"
#include "core/device/device_context.h"
#include "core/memory_tracker.h"

namespace zt::comm {

// Which library moves the bytes (comm.backend).
enum class CommBackend : std::uint8_t {
  kGloo,  // TCP; any device (CUDA tensors are staged through pinned host buffers)
  kNccl,  // CUDA devices only, one rank per GPU; needs a build with NCCL
};
std::string_view comm_backend_name(CommBackend backend);  // "gloo", "nccl"

// The f32 elements an NCCL communicator holds on its rank's device for its life, under
// comm_buffers: what its barrier all-reduces. Gloo holds nothing on the device.
inline constexpr std::int64_t kNcclBarrierElements = 1;

// Whether this binary was built with the NCCL backend (CUDA toolkit with NCCL found).
bool nccl_backend_built();
// Why comm.backend = "nccl" cannot run here: this build has no NCCL, or NCCL's libnccl.so.2
// cannot be opened (the loader's message; Note [CUDA libraries opened when used] in
// core/device/cuda_module.h); nullopt when it can. Loads the CUDA module in a build with NCCL
// (throws as load_cuda_module).
std::optional<std::string> nccl_library_problem();

struct CommOptions {
  CommBackend backend = CommBackend::kGloo;
  // The rank's device: ops are ordered after its compute stream, wait() orders the compute
  // stream after them (Note [Waiting on a collective]), and tensors may live on it. Null:
  // host tensors only, and ops are ordered by the caller alone. It must outlive the
  // communicator.
  DeviceContext* device = nullptr;
  // Bound on the rendezvous, on every transfer inside an op, and on Work::wait() by default
  // (runtime.comm_timeout_s).
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  // While the rendezvous or a Work::wait() has waited this long (and every such interval
  // after), say on stderr what it waits for: which ranks, which collective. 0: never.
  std::chrono::milliseconds status_interval{std::chrono::seconds(5)};
  // Store keys live under "gloo/<group_name>/" (both backends), so several communicators
  // (groups) can share one store. A name may be reused once every rank has destroyed its
  // communicator of it.
  std::string group_name = "world";
  // Host name or address the Gloo TCP device listens on and announces to its peers.
  std::string bind_address = "127.0.0.1";
  // Network interface to use instead of bind_address (e.g. "eth0"); empty: bind_address.
  std::string interface;
  // Pipelining granularity of the ring algorithms: each chunk moves in segments of this many
  // bytes, so reduction overlaps transfer. Tests make it tiny to exercise many segments.
  std::size_t segment_bytes = std::size_t{1} << 20;
  // Scratch buffers are counted under comm_buffers here (it must outlive the communicator);
  // null: a private tracker nobody reads.
  MemoryTracker* memory_tracker = nullptr;
  // Where every op is recorded (Note [The flight recorder]); the lanes and their splits share
  // the rank's one. Null: nothing is recorded.
  std::shared_ptr<FlightRecorder> flight_recorder;
  // The ranks compare the collectives they issue (Note [The collective check]): with a check
  // whose mode is not kOff, a communicator of more than one rank comes wrapped in a
  // CheckedCommunicator. Null: no check. The lanes and their splits share the rank's one.
  std::shared_ptr<CollectiveCheck> collective_check;
  // Fault injection (Note [Skipping an op on purpose] in comm/skipping_communicator.h): the
  // communicator comes wrapped in a SkippingCommunicator, above the check, that drops the
  // fault's op. Null: nothing is dropped. The lanes and their splits share the rank's one.
  std::shared_ptr<OpSkipFault> op_skip_fault;
};

// Connects `rank` of `world_size` through `store` (used only during this call) with
// options.backend and returns the communicator. Gloo at world size 1 needs no network and
// no peers; NCCL always builds an NCCL communicator. Throws ConfigError naming comm.backend
// when NCCL is asked for in a build without it or without a CUDA device, and CommError (or
// TimeoutError) naming the group and rank when the rendezvous fails.
std::unique_ptr<Communicator> create_communicator(Store& store, int rank, int world_size,
                                                  const CommOptions& options = {});

// create_communicator for the Gloo backend (options.backend must be kGloo).
std::unique_ptr<Communicator> create_cpu_communicator(Store& store, int rank, int world_size,
                                                      const CommOptions& options = {});

}  // namespace zt::comm
