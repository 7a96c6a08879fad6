// Communicator: asynchronous collectives among the ranks of one group. Each op
// returns a Work; ops run in submission order on the backend's communication queue (a
// thread for Gloo, a CUDA stream for NCCL), so they overlap with compute. Each op is
// ordered after the work its rank's compute stream had when it was submitted (Note
// [Waiting on a collective] in comm/work.h). Backends: Gloo (CPU, and CUDA tensors staged
// through pinned host memory) and NCCL (CUDA).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "comm/work.h"
#include "core/tensor.h"

namespace zt::comm {

enum class ReduceOp : std::uint8_t { kSum, kAvg, kMax };

enum class CollectiveKind : std::uint8_t {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kBarrier,
  kAllToAll,
};
inline constexpr std::size_t kCollectiveKindCount = 6;
std::string_view collective_name(CollectiveKind kind);

// Bytes this rank sent (payload only, not headers) and ops completed, per op kind. Bytes
// to ranks of its own node and to ranks of other nodes are told apart (Note [Counting bytes
// by node]): bytes_sent is their sum.
struct CommCounters {
  std::array<std::uint64_t, kCollectiveKindCount> bytes_sent{};
  std::array<std::uint64_t, kCollectiveKindCount> cross_node_bytes_sent{};
  std::array<std::uint64_t, kCollectiveKindCount> ops{};
  std::uint64_t bytes(CollectiveKind kind) const {
    return bytes_sent[static_cast<std::size_t>(kind)];
  }
  std::uint64_t cross_node_bytes(CollectiveKind kind) const {
    return cross_node_bytes_sent[static_cast<std::size_t>(kind)];
  }
  std::uint64_t intra_node_bytes(CollectiveKind kind) const {
    return bytes(kind) - cross_node_bytes(kind);
  }
  // Over every kind.
  std::uint64_t total_bytes() const;
  std::uint64_t total_cross_node_bytes() const;
  std::uint64_t total_intra_node_bytes() const { return total_bytes() - total_cross_node_bytes(); }
  CommCounters& operator+=(const CommCounters& other);
};

// What a backend counts: bytes sent to each peer (by its rank in the communicator) and ops
// completed, per op kind. Communicator::counters() sorts the bytes by the peers' nodes.
struct PeerCounters {
  std::vector<std::array<std::uint64_t, kCollectiveKindCount>> bytes_to_rank;  // [peer][kind]
  std::array<std::uint64_t, kCollectiveKindCount> ops{};
};

// How `count` elements split into world_size parts: the first count % world_size parts get
// one element more. reduce_scatter and all_gather use this split.
struct ShardRange {
  std::int64_t offset = 0;
  std::int64_t count = 0;
};
ShardRange shard_range(std::int64_t count, int world_size, int rank);

// One rank's part in a split (Communicator::split): ranks of one color form a group, ranked
// by (key, rank in the communicator split). kNoColor: the rank joins no group.
inline constexpr int kNoColor = -1;
struct SplitRequest {
  int color = kNoColor;
  int key = 0;
};

// The group a split gives this rank, computed alike on every member.
struct SplitGroup {
  int color = kNoColor;
  int key = 0;
  std::vector<int> members;  // the parent's ranks of the group, in the group's rank order
  int rank = -1;             // this rank's place in `members`; -1 when not a member
  std::uint64_t index = 0;   // which split of the parent this is, from 0 (same on every rank)
  std::vector<SplitRequest> requests;  // every rank's, by parent rank (decorators pass them on)
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;

  // In place: every rank ends with op over all ranks' `tensor`. f32, bf16 and f16 (bf16 and
  // f16 are accumulated in f32; every rank ends with bitwise the same result).
  virtual std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op) = 0;
  // `input` (count) on every rank; `output` receives this rank's part (shard_range) of the
  // reduction. Each rank sends (n-1)/n of `input`. `output` may be `input`'s own part.
  virtual std::shared_ptr<Work> reduce_scatter(Tensor input, Tensor output, ReduceOp op) = 0;
  // `input` is this rank's part (shard_range of output's count); `output` (count) receives
  // every rank's part in rank order. Each rank sends (n-1)/n of `output`. `input` may be
  // `output`'s own part (in place). Any dtype (moved as bytes), as for broadcast.
  virtual std::shared_ptr<Work> all_gather(Tensor input, Tensor output) = 0;
  // `input` and `output` hold world_size equal chunks each, of the same dtype (any dtype,
  // moved as bytes): chunk j of `input` goes to rank j and lands in chunk i (the sender's
  // rank) of rank j's `output`; the own chunk is copied. Each rank sends (n-1)/n of `input`,
  // a chunk to every peer (torch's all_to_all_single with equal splits; qgZ's exchange).
  // `output` must not overlap `input`.
  virtual std::shared_ptr<Work> all_to_all(Tensor input, Tensor output) = 0;
  // In place: every rank ends with `root`'s `tensor`.
  virtual std::shared_ptr<Work> broadcast(Tensor tensor, int root) = 0;
  virtual std::shared_ptr<Work> barrier() = 0;

  // What this rank sent, inside its node and across nodes, and the ops completed.
  CommCounters counters() const;
  // Which node each rank of this communicator runs on (node_of_rank[r] for rank r), so that
  // counters() tells bytes sent inside the node from bytes sent across nodes. Until placed,
  // every rank counts as on this rank's node. May be called at any time, from any thread;
  // a split's communicator is placed from its parent's nodes (Note [Counting bytes by node]).
  void place_ranks(std::vector<int> node_of_rank);
  // As placed; empty when never placed.
  std::vector<int> rank_nodes() const;
  // Bound on every op's wait() unless the caller passes its own.
  virtual std::chrono::milliseconds timeout() const = 0;

  // Runs `submit_ops`, which submits ops on this communicator, and has them run as one
  // group: NCCL launches them together (ncclGroupStart/End: one launch for a bucket's
  // reduce-scatters, and sends of one op need not wait for another's), Gloo runs them one
  // after another as always. Each op keeps its own Work; wait on them after this returns
  // (a device op of a group is enqueued only when the group closes). Groups nest; ops
  // submitted from other threads while a group is open join it.
  void group(const std::function<void()>& submit_ops);

  // Collective over this communicator (Note [Splitting a communicator]): every rank calls
  // it, in the same order relative to its other splits, with no op of its own in flight on
  // this communicator. Ranks passing the same color >= 0 get one sub-communicator, ranked by
  // (key, rank here); a rank passing kNoColor takes part and gets null. The sub-communicator
  // has its own connections and queue (Gloo: its own context; NCCL: ncclCommSplit), the
  // parent's timeout and device, and must be destroyed before the parent.
  std::unique_ptr<Communicator> split(int color, int key);
  // The same, with every rank's request already known (requests_by_rank[r] is rank r's,
  // identical on every rank: derived from the Topology), so nothing is exchanged. The
  // estimator's meta communicator, which has no peers to ask, splits only this way.
  std::unique_ptr<Communicator> split(const std::vector<SplitRequest>& requests_by_rank);

 protected:
  // Every rank's `mine` (of one length on every rank), concatenated in rank order: by default
  // an all_gather of host int32 words over this communicator, waited for. A backend whose
  // tensors cannot live on the host stages them; a decorator asks its inner communicator
  // (all_gather_host_words_of). A split's requests and the collective check go this way.
  virtual std::vector<std::int32_t> all_gather_host_words(const std::vector<std::int32_t>& mine);
  // Every rank's split request, by rank (two words each through all_gather_host_words).
  std::vector<SplitRequest> gather_split_requests(SplitRequest mine);
  // Makes the group's communicator; on a rank outside every group (group.rank == -1) takes
  // whatever part the backend needs and returns null.
  virtual std::unique_ptr<Communicator> split_group(const SplitGroup& group) = 0;
  // For decorators: the same calls on the communicator they wrap.
  static std::vector<std::int32_t> all_gather_host_words_of(Communicator& inner,
                                                            const std::vector<std::int32_t>& mine) {
    return inner.all_gather_host_words(mine);
  }
  static void begin_group_of(Communicator& inner) { inner.begin_group(); }
  static void end_group_of(Communicator& inner) { inner.end_group(); }
  static PeerCounters peer_counters_of(const Communicator& inner) { return inner.peer_counters(); }

  // Bytes sent to each peer and ops completed, as the backend counted them (OpCounters).
  virtual PeerCounters peer_counters() const = 0;

  // Open and close a group (group() pairs them, also when submit_ops throws). A backend
  // that runs ops one at a time keeps these no-ops.
  virtual void begin_group() {}
  virtual void end_group() {}

 private:
  std::atomic<std::uint64_t> splits_{0};  // splits made so far: the next SplitGroup's index
  mutable std::mutex placement_mutex_;
  std::vector<int> node_of_rank_;  // guarded by placement_mutex_; empty: not placed
};

}  // namespace zt::comm
