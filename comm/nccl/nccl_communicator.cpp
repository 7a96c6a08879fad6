// NcclCommunicator: rendezvous and initialization, submission (sequence numbers, Works,
// groups), launching on the comm thread, aborting, and finalizing.
#include "comm/nccl/nccl_communicator.h"

#include <utility>

#include "comm/nccl/cuda_comm_stream_internal.h"
#include "comm/nccl/nccl_errors_internal.h"
#include "comm/nccl/nccl_library_internal.h"
#include "comm/nccl/nccl_ops_internal.h"
#include "comm/nccl/nccl_rendezvous_internal.h"
#include "comm/nccl/nccl_watchdog_internal.h"
#include "comm/rendezvous_keys.h"
#include "core/error.h"

namespace zt::comm {
namespace {

std::string describe_place(int rank, int world_size, const CommOptions& options) {
  return "on rank " + std::to_string(rank) + " of " + std::to_string(world_size) + " (group " +
         options.group_name + ", " + options.device->device().to_string() + ")";
}

}  // namespace

NcclCommunicator::NcclCommunicator(Store& store, int rank, int world_size,
                                   const CommOptions& options)
    : rank_(rank),
      world_size_(world_size),
      options_(options),
      device_(*options.device),
      where_(describe_place(rank, world_size, options)),
      counters_(world_size) {
  ZT_CHECK(device_.device().kind == DeviceKind::kCuda,
           "an NCCL communicator on " + device_.device().to_string());
  const int device_index = device_.device().index;
  ZT_COMM_CUDA_CHECK(cudaSetDevice(device_index), where_);
  const std::string key_prefix = rendezvous_key_prefix(options.group_name);
  const std::string who = "NCCL rendezvous " + where_ + " under store prefix '" + key_prefix + "'";
  // First, so that a launcher hosting the store sees who has arrived (as Gloo's does).
  store.set(joined_key(key_prefix, rank), "nccl " + device_.device().to_string());
  check_one_gpu_per_rank(store, key_prefix, rank, world_size, device_index,
                         device_.device().to_string(), options.timeout, who);
  const ncclUniqueId id = exchange_unique_id(store, key_prefix, rank, options.timeout, who);
  comm_ = init_nccl_comm(id, rank, world_size, options.timeout, options.status_interval, who);
  // Every rank has read the id: it could not have joined the communicator otherwise.
  if (rank == 0) store.delete_key(unique_id_key(key_prefix));
  start();
}

NcclCommunicator::NcclCommunicator(ncclComm* comm, int rank, int world_size,
                                   const CommOptions& options)
    : rank_(rank),
      world_size_(world_size),
      options_(options),
      device_(*options.device),
      where_(describe_place(rank, world_size, options)),
      counters_(world_size),
      comm_(comm) {
  start();
}

void NcclCommunicator::start() {
  const int device_index = device_.device().index;
  // The destructor does not run when the rest throws: nothing else would release the comm.
  try {
    barrier_buffer_ = Tensor::zeros(Shape{kNcclBarrierElements}, DType::kF32, device_.tracker(),
                                    MemoryCategory::kCommBuffers);
    device_.compute_stream().synchronize();  // zeros written before the comm stream reads
    stream_ = std::make_unique<CudaCommStream>(device_index, where_);
    watchdog_ = std::make_unique<NcclWatchdog>(
        options_.timeout, device_.device().to_string(), counters_, [this] { return async_error(); },
        [this](const std::string& reason) { abort(reason); });
    comm_thread_ = std::make_unique<CpuStream>("nccl comm rank " + std::to_string(rank_));
  } catch (...) {
    watchdog_.reset();
    nccl_library().ncclCommAbort(comm_);
    comm_ = nullptr;
    throw;
  }
}

NcclCommunicator::~NcclCommunicator() {
  {
    std::lock_guard lock(submit_mutex_);
    if (!group_.empty()) enqueue_batch(std::exchange(group_, {}));  // a group left open
  }
  comm_thread_.reset();
  watchdog_.reset();
  finalize();
}

void NcclCommunicator::finalize() noexcept {
  std::lock_guard lock(nccl_mutex_);
  if (comm_ == nullptr) return;  // aborted
  cudaSetDevice(device_.device().index);
  // Non-blocking: finalize flushes what is left, then reports success through the poll.
  ncclResult_t state = nccl_library().ncclCommFinalize(comm_);
  if (state == ncclSuccess || state == ncclInProgress) {
    state = wait_while_in_progress(comm_, options_.timeout);
  }
  if (state == ncclSuccess) {
    nccl_library().ncclCommDestroy(comm_);
  } else {
    nccl_library().ncclCommAbort(comm_);
  }
  comm_ = nullptr;
}

std::shared_ptr<Work> NcclCommunicator::submit(CollectiveRequest request) {
  check_request(request, rank_, world_size_, TensorHome{"NCCL", /*host=*/false, device_.device()});
  DeviceStream& compute = device_.compute_stream();
  PendingOp op;
  op.inputs_ready = compute.record();
  op.request = std::move(request);
  std::lock_guard lock(submit_mutex_);
  const std::uint64_t sequence_number = next_sequence_number_++;
  op.work = std::make_shared<Work>(
      sequence_number, describe_request(op.request, sequence_number, rank_, world_size_),
      options_.timeout, options_.status_interval, &compute);
  op.flight_id = record_submitted(options_.flight_recorder.get(), options_.group_name,
                                  sequence_number, op.request);
  std::shared_ptr<Work> work = op.work;
  if (group_depth_ > 0) {
    group_.push_back(std::move(op));
  } else {
    std::vector<PendingOp> batch;
    batch.push_back(std::move(op));
    enqueue_batch(std::move(batch));
  }
  return work;
}

void NcclCommunicator::record_end(const PendingOp& op, const std::string& error) const {
  if (options_.flight_recorder != nullptr && op.flight_id != kNotRecorded) {
    options_.flight_recorder->ended(op.flight_id, error);
  }
}

void NcclCommunicator::enqueue_batch(std::vector<PendingOp> batch) {
  comm_thread_->enqueue([this, batch = std::move(batch)] { launch(batch); });
}

void NcclCommunicator::begin_group() {
  std::lock_guard lock(submit_mutex_);
  ++group_depth_;
}

void NcclCommunicator::end_group() {
  std::lock_guard lock(submit_mutex_);
  ZT_CHECK(group_depth_ > 0, "end_group without begin_group");
  if (--group_depth_ == 0 && !group_.empty()) enqueue_batch(std::exchange(group_, {}));
}

void NcclCommunicator::issue(const PendingOp& op) {
  const std::string where = op.work->description();
  if (op.request.kind == CollectiveKind::kBarrier) {
    ZT_NCCL_CHECK(nccl_library().ncclAllReduce(barrier_buffer_.data(), barrier_buffer_.data(), 1,
                                               ncclFloat32, ncclSum, comm_, stream_->get()),
                  comm_, where);
    return;
  }
  issue_nccl_op(op.request, comm_, stream_->get(), rank_, world_size_, where);
}

void NcclCommunicator::launch(const std::vector<PendingOp>& batch) {
  std::string broken;
  {
    std::lock_guard lock(nccl_mutex_);
    broken = broken_reason_;
  }
  if (!broken.empty()) {
    for (const PendingOp& op : batch) {
      record_end(op, broken);
      op.work->mark_completed(std::make_exception_ptr(CommError(broken)));
    }
    return;
  }
  const PendingOp* current = &batch.front();
  try {
    ZT_COMM_CUDA_CHECK(cudaSetDevice(device_.device().index), where_);
    for (const PendingOp& op : batch) stream_->wait(op.inputs_ready);
    DeviceEvent done;
    {
      std::lock_guard lock(nccl_mutex_);
      if (comm_ == nullptr) throw CommError(broken_reason_);
      const bool grouped = batch.size() > 1;
      if (grouped) ZT_NCCL_CHECK(nccl_library().ncclGroupStart(), comm_, where_);
      for (const PendingOp& op : batch) {
        current = &op;
        issue(op);
      }
      current = &batch.front();
      if (grouped)
        ZT_NCCL_CHECK(nccl_library().ncclGroupEnd(), comm_, current->work->description());
      const ncclResult_t state = wait_while_in_progress(comm_, options_.timeout);
      if (state == ncclInProgress) {
        throw TimeoutError("issuing it did not finish within " +
                           std::to_string(options_.timeout.count()) +
                           " ms (runtime.comm_timeout_s); a peer may be stuck or gone");
      }
      check_nccl(state, "ncclCommGetAsyncError", comm_, current->work->description());
      done = stream_->record();
    }
    const auto now = std::chrono::steady_clock::now();
    FlightRecorder* recorder = options_.flight_recorder.get();
    for (const PendingOp& op : batch) {
      op.work->mark_enqueued(done);
      // "running" from here: on the comm stream, which runs it once what is before it has.
      const bool recorded = recorder != nullptr && op.flight_id != kNotRecorded;
      if (recorded) recorder->started(op.flight_id);
      watchdog_->watch({op.work, op.request.kind, nccl_bytes_sent(op.request, rank_, world_size_),
                        done, now, recorded ? recorder : nullptr, op.flight_id});
    }
  } catch (...) {
    const std::exception_ptr error = std::current_exception();
    std::string reason = "communicator is broken after " + current->work->description() + " failed";
    std::string what = "unknown error";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
      reason += ": " + what;
    } catch (...) {
    }
    abort(reason);
    for (const PendingOp& op : batch) {
      record_end(op, &op == current ? what : reason);
      op.work->mark_completed(&op == current ? error : std::make_exception_ptr(CommError(reason)));
    }
  }
}

void NcclCommunicator::abort(const std::string& broken_reason) noexcept {
  bool aborted_now = false;
  {
    std::lock_guard lock(nccl_mutex_);
    if (broken_reason_.empty()) {
      try {
        broken_reason_ = broken_reason;
      } catch (...) {
        // Out of memory for the message: the null comm_ below still fails later ops.
      }
    }
    if (comm_ != nullptr) {
      // Peers blocked on this rank's part of an op fail too instead of hanging; NCCL's
      // kernels of this communicator stop.
      nccl_library().ncclCommAbort(comm_);
      comm_ = nullptr;
      aborted_now = true;
    }
  }
  // Ops already on the stream ran against an aborted communicator: their results are void.
  if (aborted_now && watchdog_ != nullptr) {
    try {
      watchdog_->fail_all(broken_reason);
    } catch (...) {
    }
  }
}

std::exception_ptr NcclCommunicator::async_error() {
  std::lock_guard lock(nccl_mutex_);
  if (comm_ == nullptr) return nullptr;
  ncclResult_t state = ncclSuccess;
  const ncclResult_t queried = nccl_library().ncclCommGetAsyncError(comm_, &state);
  const ncclResult_t result = queried != ncclSuccess ? queried : state;
  if (result == ncclSuccess || result == ncclInProgress) return nullptr;
  return std::make_exception_ptr(
      CommError(nccl_error_message(result, "ncclCommGetAsyncError", comm_, where_)));
}

std::shared_ptr<Work> NcclCommunicator::all_reduce(Tensor tensor, ReduceOp op) {
  return submit({CollectiveKind::kAllReduce, std::move(tensor), {}, op, 0});
}

std::shared_ptr<Work> NcclCommunicator::reduce_scatter(Tensor input, Tensor output, ReduceOp op) {
  return submit({CollectiveKind::kReduceScatter, std::move(input), std::move(output), op, 0});
}

std::shared_ptr<Work> NcclCommunicator::all_gather(Tensor input, Tensor output) {
  return submit(
      {CollectiveKind::kAllGather, std::move(input), std::move(output), ReduceOp::kSum, 0});
}

std::shared_ptr<Work> NcclCommunicator::all_to_all(Tensor input, Tensor output) {
  return submit(
      {CollectiveKind::kAllToAll, std::move(input), std::move(output), ReduceOp::kSum, 0});
}

std::shared_ptr<Work> NcclCommunicator::broadcast(Tensor tensor, int root) {
  return submit({CollectiveKind::kBroadcast, std::move(tensor), {}, ReduceOp::kSum, root});
}

std::shared_ptr<Work> NcclCommunicator::barrier() {
  return submit({CollectiveKind::kBarrier, {}, {}, ReduceOp::kSum, 0});
}

}  // namespace zt::comm
