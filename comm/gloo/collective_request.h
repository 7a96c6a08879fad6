// CollectiveRequest: what one collective was asked to do, its checks against the contract
// in communicator.h, and the description its Work and errors carry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "comm/communicator.h"
#include "comm/flight_recorder.h"
#include "core/device/device_context.h"
#include "core/tensor.h"

namespace zt::comm {

struct CollectiveRequest {
  CollectiveKind kind = CollectiveKind::kBarrier;
  Tensor input;   // all_reduce and broadcast: the tensor, reduced or overwritten in place
  Tensor output;  // reduce_scatter, all_gather and all_to_all only
  ReduceOp op = ReduceOp::kSum;
  int root = 0;  // broadcast only
};

std::string_view reduce_op_name(ReduceOp op);

// Where a communicator's tensors may live.
struct TensorHome {
  std::string_view backend = "Gloo";  // for messages
  bool host = true;                   // CPU tensors
  std::optional<Device> device;       // tensors on this device (the communicator's)
};

// The home of a communicator that reaches the host and, when `device` is a CUDA context,
// its device's tensors (staged through host memory).
TensorHome host_and_device_home(const DeviceContext* device);

// Throws InternalError (a caller bug) when tensors are undefined, not in `home` (or the
// two of a pair on different devices), of different dtypes or of sizes that do not match
// shard_range, or the root is out of range.
void check_request(const CollectiveRequest& request, int rank, int world_size,
                   const TensorHome& home = {});

// The device the op's tensors live on (the CPU for a barrier).
Device request_device(const CollectiveRequest& request);

// "reduce_scatter #12 (16 MiB f32, sum) on rank 2 of 4", "barrier #3 on rank 0 of 2".
std::string describe_request(const CollectiveRequest& request, std::uint64_t sequence_number,
                             int rank, int world_size);

// Records the submitted request in `recorder` (the group's op `sequence_number`); returns its
// id there, or kNotRecorded when `recorder` is null.
inline constexpr std::uint64_t kNotRecorded = ~std::uint64_t{0};
std::uint64_t record_submitted(FlightRecorder* recorder, const std::string& group,
                               std::uint64_t sequence_number, const CollectiveRequest& request);

}  // namespace zt::comm
