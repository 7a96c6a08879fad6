// NcclCommunicator's splits: host words (a split's (color, key), the collective check)
// exchanged through the device, and ncclCommSplit, polled as the non-blocking communicator's
// other calls are.
#include <cstdint>
#include <vector>

#include "comm/nccl/nccl_communicator.h"
#include "comm/nccl/nccl_errors_internal.h"
#include "comm/nccl/nccl_library_internal.h"
#include "comm/nccl/nccl_rendezvous_internal.h"
#include "comm/split_requests_internal.h"
#include "core/error.h"

namespace zt::comm {

std::vector<std::int32_t> NcclCommunicator::all_gather_host_words(
    const std::vector<std::int32_t>& mine) {
  const auto words = static_cast<std::int64_t>(mine.size());
  std::vector<std::int32_t> own = mine;
  std::vector<std::int32_t> all(mine.size() * static_cast<std::size_t>(world_size_));
  const Tensor own_host = Tensor::wrap(own.data(), Shape{words}, DType::kI32);
  const Tensor all_host = Tensor::wrap(all.data(), Shape{words * world_size_}, DType::kI32);
  const Tensor own_device =
      Tensor::empty(Shape{words}, DType::kI32, device_.tracker(), MemoryCategory::kCommBuffers);
  const Tensor all_device = Tensor::empty(Shape{words * world_size_}, DType::kI32,
                                          device_.tracker(), MemoryCategory::kCommBuffers);
  device_.ops().copy(own_host, own_device);  // on the compute stream, which the op waits for
  all_gather(own_device, all_device)->wait();
  device_.ops().copy(all_device, all_host);
  device_.compute_stream().synchronize();  // `all` is read on the host next
  return all;
}

std::unique_ptr<Communicator> NcclCommunicator::split_group(const SplitGroup& group) {
  CommOptions options = options_;
  options.group_name = split_group_name(options_.group_name, group);
  const std::string who = "ncclCommSplit " + where_ + " into color " + std::to_string(group.color);
  ncclComm_t sub = nullptr;
  {
    std::lock_guard lock(nccl_mutex_);
    if (comm_ == nullptr) throw CommError(who + ": " + broken_reason_);
    ZT_COMM_CUDA_CHECK(cudaSetDevice(device_.device().index), where_);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    // NCCL_SPLIT_NOCOLOR is kNoColor (-1): such a rank takes part and gets no communicator.
    ZT_NCCL_CHECK(nccl_library().ncclCommSplit(comm_, group.color, group.key, &sub, &config), comm_,
                  who);
    // A non-blocking split reports through the new communicator (the parent's when none).
    const ncclResult_t state =
        wait_while_in_progress(sub != nullptr ? sub : comm_, options_.timeout);
    if (state != ncclSuccess) {
      if (sub != nullptr) nccl_library().ncclCommAbort(sub);
      if (state == ncclInProgress) {
        throw TimeoutError(who + ": did not complete within " +
                           std::to_string(options_.timeout.count()) +
                           " ms (runtime.comm_timeout_s); a rank of the parent may not have "
                           "called split");
      }
      check_nccl(state, "ncclCommSplit", comm_, who);
    }
  }
  if (group.rank < 0) {
    ZT_CHECK(sub == nullptr, who + ": NCCL made a communicator for a rank of no color");
    return nullptr;
  }
  ZT_CHECK(sub != nullptr, who + ": NCCL made no communicator for a member");
  return std::make_unique<NcclCommunicator>(sub, group.rank, static_cast<int>(group.members.size()),
                                            options);
}

}  // namespace zt::comm
