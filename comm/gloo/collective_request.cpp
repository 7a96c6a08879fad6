// Argument checks and descriptions shared by the CPU communicators.
#include "comm/gloo/collective_request.h"

#include "core/config/byte_size.h"
#include "core/error.h"

namespace zt::comm {
namespace {

void check_cpu_tensor(const Tensor& tensor, std::string_view role) {
  ZT_CHECK(tensor.defined(), std::string(role) + " tensor is undefined");
  ZT_CHECK(tensor.device().kind == DeviceKind::kCpu,
           std::string(role) + " tensor is on " + tensor.device().to_string() +
               "; the Gloo communicator moves CPU tensors only");
}

void check_sharded_pair(const Tensor& full, const Tensor& shard, int rank, int world_size,
                        std::string_view op_name) {
  check_cpu_tensor(full, "full");
  check_cpu_tensor(shard, "shard");
  ZT_CHECK(full.dtype() == shard.dtype(), std::string(op_name) + " between " +
                                              std::string(dtype_name(full.dtype())) + " and " +
                                              std::string(dtype_name(shard.dtype())));
  const ShardRange range = shard_range(full.numel(), world_size, rank);
  ZT_CHECK(shard.numel() == range.count,
           std::string(op_name) + " of " + std::to_string(full.numel()) + " elements on rank " +
               std::to_string(rank) + " of " + std::to_string(world_size) + " needs a shard of " +
               std::to_string(range.count) + " elements, got " + std::to_string(shard.numel()));
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

void check_request(const CollectiveRequest& request, int rank, int world_size) {
  switch (request.kind) {
    case CollectiveKind::kAllReduce:
      check_cpu_tensor(request.input, "all_reduce");
      check_reducible(request.input, "all_reduce");
      return;
    case CollectiveKind::kReduceScatter:
      check_sharded_pair(request.input, request.output, rank, world_size, "reduce_scatter");
      check_reducible(request.input, "reduce_scatter");
      return;
    case CollectiveKind::kAllGather:
      check_sharded_pair(request.output, request.input, rank, world_size, "all_gather");
      return;
    case CollectiveKind::kBroadcast:
      check_cpu_tensor(request.input, "broadcast");
      ZT_CHECK(request.root >= 0 && request.root < world_size,
               "broadcast from root " + std::to_string(request.root) + " in a world of " +
                   std::to_string(world_size));
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
    } else if (request.kind != CollectiveKind::kAllGather) {
      text += ", " + std::string(reduce_op_name(request.op));
    }
    text += ")";
  }
  return text + " on rank " + std::to_string(rank) + " of " + std::to_string(world_size);
}

}  // namespace zt::comm
