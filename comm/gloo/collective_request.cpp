// Argument checks and descriptions shared by the CPU communicators.
#include "comm/gloo/collective_request.h"

#include "core/config/byte_size.h"
#include "core/error.h"

namespace zt::comm {
namespace {

std::string describe_home(const TensorHome& home) {
  std::string text = "the " + std::string(home.backend) + " communicator moves ";
  if (home.host) text += "CPU tensors";
  if (home.device) {
    text += std::string(home.host ? " and " : "") + "tensors on " + home.device->to_string();
  }
  return text + " only";
}

void check_tensor_home(const Tensor& tensor, std::string_view role, const TensorHome& home) {
  ZT_CHECK(tensor.defined(), std::string(role) + " tensor is undefined");
  const bool on_host = tensor.device().kind == DeviceKind::kCpu;
  const bool at_home =
      on_host ? home.host : (home.device.has_value() && tensor.device() == *home.device);
  ZT_CHECK(at_home, std::string(role) + " tensor is on " + tensor.device().to_string() + "; " +
                        describe_home(home));
}

void check_sharded_pair(const Tensor& full, const Tensor& shard, int rank, int world_size,
                        std::string_view op_name, const TensorHome& home) {
  check_tensor_home(full, "full", home);
  check_tensor_home(shard, "shard", home);
  ZT_CHECK(full.device() == shard.device(), std::string(op_name) + " between a tensor on " +
                                                full.device().to_string() + " and one on " +
                                                shard.device().to_string());
  ZT_CHECK(full.dtype() == shard.dtype(), std::string(op_name) + " between " +
                                              std::string(dtype_name(full.dtype())) + " and " +
                                              std::string(dtype_name(shard.dtype())));
  const ShardRange range = shard_range(full.numel(), world_size, rank);
  ZT_CHECK(shard.numel() == range.count,
           std::string(op_name) + " of " + std::to_string(full.numel()) + " elements on rank " +
               std::to_string(rank) + " of " + std::to_string(world_size) + " needs a shard of " +
               std::to_string(range.count) + " elements, got " + std::to_string(shard.numel()));
}

// all_to_all: equal chunks, one per rank, in two disjoint buffers of one dtype.
void check_exchange_pair(const Tensor& input, const Tensor& output, int world_size,
                         const TensorHome& home) {
  check_tensor_home(input, "all_to_all input", home);
  check_tensor_home(output, "all_to_all output", home);
  ZT_CHECK(input.device() == output.device(), "all_to_all between a tensor on " +
                                                  input.device().to_string() + " and one on " +
                                                  output.device().to_string());
  ZT_CHECK(input.dtype() == output.dtype(), "all_to_all between " +
                                                std::string(dtype_name(input.dtype())) + " and " +
                                                std::string(dtype_name(output.dtype())));
  ZT_CHECK(input.numel() == output.numel() && input.numel() % world_size == 0,
           "all_to_all of " + std::to_string(input.numel()) + " elements into " +
               std::to_string(output.numel()) + " among " + std::to_string(world_size) +
               " ranks: both must hold " + std::to_string(world_size) +
               " equal chunks of the same size");
  const auto* in = static_cast<const std::byte*>(input.data());
  const auto* out = static_cast<const std::byte*>(output.data());
  ZT_CHECK(input.numel() == 0 || in + input.nbytes() <= out || out + output.nbytes() <= in,
           "all_to_all's output overlaps its input");
}

void check_reducible(const Tensor& tensor, std::string_view op_name) {
  ZT_CHECK(is_floating(tensor.dtype()), std::string(op_name) + " of " +
                                            std::string(dtype_name(tensor.dtype())) +
                                            ": reductions take f32, bf16 or f16");
}

std::int64_t described_bytes(const CollectiveRequest& request) {
  switch (request.kind) {
    case CollectiveKind::kAllGather:
      return static_cast<std::int64_t>(request.output.nbytes());
    case CollectiveKind::kBarrier:
      return 0;
    default:
      return static_cast<std::int64_t>(request.input.nbytes());
  }
}

}  // namespace

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kAvg:
      return "avg";
    case ReduceOp::kMax:
      return "max";
  }
  return "unknown";
}

TensorHome host_and_device_home(const DeviceContext* device) {
  TensorHome home;
  if (device != nullptr && device->device().kind != DeviceKind::kCpu)
    home.device = device->device();
  return home;
}

Device request_device(const CollectiveRequest& request) {
  return request.input.defined() ? request.input.device() : Device::cpu();
}

void check_request(const CollectiveRequest& request, int rank, int world_size,
                   const TensorHome& home) {
  switch (request.kind) {
    case CollectiveKind::kAllReduce:
      check_tensor_home(request.input, "all_reduce", home);
      check_reducible(request.input, "all_reduce");
      return;
    case CollectiveKind::kReduceScatter:
      check_sharded_pair(request.input, request.output, rank, world_size, "reduce_scatter", home);
      check_reducible(request.input, "reduce_scatter");
      return;
    case CollectiveKind::kAllGather:
      check_sharded_pair(request.output, request.input, rank, world_size, "all_gather", home);
      return;
    case CollectiveKind::kBroadcast:
      check_tensor_home(request.input, "broadcast", home);
      ZT_CHECK(request.root >= 0 && request.root < world_size,
               "broadcast from root " + std::to_string(request.root) + " in a world of " +
                   std::to_string(world_size));
      return;
    case CollectiveKind::kAllToAll:
      check_exchange_pair(request.input, request.output, world_size, home);
      return;
    case CollectiveKind::kBarrier:
      return;
  }
}

std::string describe_request(const CollectiveRequest& request, std::uint64_t sequence_number,
                             int rank, int world_size) {
  std::string text =
      std::string(collective_name(request.kind)) + " #" + std::to_string(sequence_number);
  if (request.kind != CollectiveKind::kBarrier) {
    const Tensor& sized =
        request.kind == CollectiveKind::kAllGather ? request.output : request.input;
    text += " (" + format_byte_size(described_bytes(request)) + " " +
            std::string(dtype_name(sized.dtype()));
    if (request.kind == CollectiveKind::kBroadcast) {
      text += ", root " + std::to_string(request.root);
    } else if (request.kind != CollectiveKind::kAllGather &&
               request.kind != CollectiveKind::kAllToAll) {
      text += ", " + std::string(reduce_op_name(request.op));
    }
    text += ")";
  }
  return text + " on rank " + std::to_string(rank) + " of " + std::to_string(world_size);
}

std::uint64_t record_submitted(FlightRecorder* recorder, const std::string& group,
                               std::uint64_t sequence_number, const CollectiveRequest& request) {
  if (recorder == nullptr) return kNotRecorded;
  const Tensor* sized = nullptr;
  if (request.kind != CollectiveKind::kBarrier) {
    sized = request.kind == CollectiveKind::kAllGather ? &request.output : &request.input;
  }
  return recorder->enqueued(group, sequence_number, request.kind, sized ? sized->numel() : 0,
                            sized ? sized->dtype() : DType::kF32,
                            request.kind == CollectiveKind::kBroadcast ? request.root : -1);
}

}  // namespace zt::comm
