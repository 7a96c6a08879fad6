// The estimator's communicator: ops complete at once, bytes and Gloo's scratch counted.
#include "comm/meta_communicator.h"

#include "comm/communicator_factory.h"
#include "comm/gloo/gloo_builtin_ops.h"
#include "comm/gloo/ring.h"
#include "core/error.h"

namespace zt::comm {

MetaCommunicator::MetaCommunicator(int rank, int world_size, MemoryTracker* scratch_tracker,
                                   MemoryTracker* nccl_device_tracker, std::size_t segment_bytes)
    : rank_(rank),
      world_size_(world_size),
      segment_bytes_(segment_bytes),
      scratch_tracker_(scratch_tracker),
      nccl_device_tracker_(nccl_device_tracker),
      counters_(world_size) {
  ZT_CHECK(world_size >= 1 && rank >= 0 && rank < world_size,
           "meta communicator rank " + std::to_string(rank) + " of " + std::to_string(world_size));
  // A world of one talks to nobody: Gloo's single-rank communicator has no scratch either.
  if (scratch_tracker != nullptr && world_size > 1) {
    scratch_ = std::make_unique<ScratchBuffer>(*scratch_tracker);
  }
  if (nccl_device_tracker != nullptr) {
    nccl_barrier_buffer_ = Tensor::zeros(Shape{kNcclBarrierElements}, DType::kF32,
                                         *nccl_device_tracker, MemoryCategory::kCommBuffers);
  }
}

std::vector<std::int32_t> MetaCommunicator::all_gather_host_words(
    const std::vector<std::int32_t>& mine) {
  throw InternalError("the meta communicator (rank " + std::to_string(rank_) + " of " +
                      std::to_string(world_size_) + ") cannot learn its peers' words (asked to " +
                      "gather " + std::to_string(mine.size()) +
                      "): split it with every rank's requests, and run no collective check");
}

std::unique_ptr<Communicator> MetaCommunicator::split_group(const SplitGroup& group) {
  if (group.rank < 0) return nullptr;
  return std::make_unique<MetaCommunicator>(group.rank, static_cast<int>(group.members.size()),
                                            scratch_tracker_, nccl_device_tracker_, segment_bytes_);
}

std::shared_ptr<Work> MetaCommunicator::completed(CollectiveKind kind,
                                                  const std::vector<PeerBytes>& sent) {
  auto work = std::make_shared<Work>(next_sequence_number_++,
                                     std::string(collective_name(kind)) + " (meta)", timeout());
  if (world_size_ > 1) {
    counters_.add(kind, sent);
  } else {
    counters_.add(kind, {});
  }
  work->mark_completed();
  return work;
}

std::shared_ptr<Work> MetaCommunicator::completed(CollectiveKind kind, std::uint64_t bytes_sent) {
  return completed(kind, std::vector<PeerBytes>{{right_neighbour(), bytes_sent}});
}

std::uint64_t MetaCommunicator::ring_pass_bytes(const Tensor& tensor, int skipped_owner) const {
  const std::int64_t skipped = shard_range(tensor.numel(), world_size_, skipped_owner).count;
  return static_cast<std::uint64_t>(tensor.numel() - skipped) * dtype_size(tensor.dtype());
}

void MetaCommunicator::reserve_scratch(const Tensor& input) {
  if (!scratch_) return;
  std::lock_guard lock(scratch_mutex_);
  scratch_->reserve(ring_reduce_scatter_scratch_bytes(input.numel(), world_size_, rank_,
                                                      input.dtype(), segment_bytes_));
}

std::shared_ptr<Work> MetaCommunicator::all_reduce(Tensor tensor, ReduceOp) {
  reserve_scratch(tensor);
  // Reduce-scatter, then all-gather, as Gloo's ring (and NCCL's, as counted) does.
  return completed(CollectiveKind::kAllReduce,
                   ring_pass_bytes(tensor, rank_) + ring_pass_bytes(tensor, right_neighbour()));
}

std::shared_ptr<Work> MetaCommunicator::reduce_scatter(Tensor input, Tensor, ReduceOp) {
  reserve_scratch(input);
  return completed(CollectiveKind::kReduceScatter, ring_pass_bytes(input, rank_));
}

std::shared_ptr<Work> MetaCommunicator::all_gather(Tensor, Tensor output) {
  return completed(CollectiveKind::kAllGather, ring_pass_bytes(output, right_neighbour()));
}

// A chunk to every peer (Note [Pairwise exchange]; NCCL's grouped sends count the same).
std::shared_ptr<Work> MetaCommunicator::all_to_all(Tensor input, Tensor) {
  const std::uint64_t chunk = input.nbytes() / static_cast<std::uint64_t>(world_size_);
  std::vector<PeerBytes> sent;
  if (chunk > 0) {
    for (int peer = 0; peer < world_size_; ++peer) {
      if (peer != rank_) sent.push_back({peer, chunk});
    }
  }
  return completed(CollectiveKind::kAllToAll, sent);
}

std::shared_ptr<Work> MetaCommunicator::broadcast(Tensor tensor, int root) {
  const auto bytes = static_cast<std::uint64_t>(tensor.nbytes());
  if (nccl_device_tracker_ != nullptr) {
    // NCCL's broadcast, as counted: pipelined along the ring from the root, which the rank
    // before the root does not send on.
    return completed(CollectiveKind::kBroadcast, right_neighbour() == root ? 0 : bytes);
  }
  std::vector<PeerBytes> sent;
  if (bytes > 0) {
    for (int peer : binomial_broadcast_peers(rank_, world_size_, root))
      sent.push_back({peer, bytes});
  }
  return completed(CollectiveKind::kBroadcast, sent);
}

std::shared_ptr<Work> MetaCommunicator::barrier() { return completed(CollectiveKind::kBarrier, 0); }

}  // namespace zt::comm
