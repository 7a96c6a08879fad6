// The backend-independent parts of the Communicator interface: op names and shard ranges.
#include "comm/communicator.h"

#include <string>

#include "core/error.h"

namespace zt::comm {

std::string_view collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kBarrier:
      return "barrier";
    case CollectiveKind::kAllToAll:
      return "all_to_all";
  }
  return "unknown";
}

void Communicator::group(const std::function<void()>& submit_ops) {
  begin_group();
  try {
    submit_ops();
  } catch (...) {
    end_group();  // what was submitted before the throw still runs, and its Works complete
    throw;
  }
  end_group();
}

ShardRange shard_range(std::int64_t count, int world_size, int rank) {
  ZT_CHECK(count >= 0, "shard_range of a negative count " + std::to_string(count));
  ZT_CHECK(world_size > 0 && rank >= 0 && rank < world_size,
           "shard_range for rank " + std::to_string(rank) + " of " + std::to_string(world_size));
  // The first `remainder` ranks hold `base + 1` elements, the rest `base`.
  const std::int64_t base = count / world_size;
  const std::int64_t remainder = count % world_size;
  const std::int64_t r = rank;
  const std::int64_t offset = r * base + (r < remainder ? r : remainder);
  return {offset, base + (r < remainder ? 1 : 0)};
}

}  // namespace zt::comm
