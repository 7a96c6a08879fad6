// BatchUploader (Note [Batches in staging memory]): a batch's host tensor is held until the
// compute stream has run its copy, and let go once it has, without the host waiting.
#include "runtime/engine/batch_upload.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "core/memory_tracker.h"
#include "support/worker_compute_context.h"

namespace zt::engine {
namespace {

Tensor host_ids(MemoryTracker& host, std::int32_t first) {
  Tensor ids = Tensor::empty(Shape{2, 3}, DType::kI32, host, MemoryCategory::kActivations);
  std::int32_t next = first;
  for (std::int32_t& id : ids.span<std::int32_t>()) id = next++;
  return ids;
}

// Blocks the worker compute stream until the returned promise is set.
std::promise<void> block_compute(testing::WorkerComputeContext& device) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  device.worker().enqueue([released] { released.wait_for(std::chrono::seconds(30)); });
  return release;
}

TEST(BatchUpload, HoldsTheHostTensorUntilTheComputeStreamHasRunPastItsCopy) {
  testing::WorkerComputeContext device;
  MemoryTracker host(Device::cpu());
  BatchUploader uploads(device);
  std::promise<void> release = block_compute(device);
  Tensor uploaded = uploads.upload(host_ids(host, 7));
  // Our handle to the host tensor is gone; the uploader's keeps its bytes allocated while
  // the stream (blocked) has not reached the copy.
  EXPECT_EQ(uploads.pending(), 1u);
  EXPECT_EQ(host.total_current_bytes(), 6 * 4);
  uploads.release_completed();
  EXPECT_EQ(uploads.pending(), 1u);
  release.set_value();
  device.compute_stream().synchronize();
  uploads.release_completed();
  EXPECT_EQ(uploads.pending(), 0u);
  EXPECT_EQ(host.total_current_bytes(), 0);
  const std::vector<std::int32_t> expected{7, 8, 9, 10, 11, 12};
  const auto values = uploaded.span<std::int32_t>();
  EXPECT_EQ(std::vector<std::int32_t>(values.begin(), values.end()), expected);
  EXPECT_EQ(device.tracker().current_bytes(MemoryCategory::kActivations), 6 * 4);
}

TEST(BatchUpload, ANewUploadLetsGoOfCopiesThatHaveRun) {
  testing::WorkerComputeContext device;
  MemoryTracker host(Device::cpu());
  BatchUploader uploads(device);
  for (std::int32_t micro = 0; micro < 5; ++micro) {
    (void)uploads.upload(host_ids(host, micro));
    device.compute_stream().synchronize();
  }
  // Each upload found the previous copy done and dropped it: only the last is held.
  EXPECT_EQ(uploads.pending(), 1u);
  EXPECT_EQ(host.total_current_bytes(), 6 * 4);
}

TEST(BatchUpload, HoldsAtMostTheBoundBeforeWaitingForTheOldest) {
  testing::WorkerComputeContext device;
  MemoryTracker host(Device::cpu());
  BatchUploader uploads(device);
  std::promise<void> release = block_compute(device);
  for (std::size_t micro = 0; micro < BatchUploader::kMaxPending; ++micro) {
    (void)uploads.upload(host_ids(host, 0));
  }
  EXPECT_EQ(uploads.pending(), BatchUploader::kMaxPending);
  // The next upload waits for the oldest copy: release the stream from another thread.
  auto releaser = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    release.set_value();
  });
  (void)uploads.upload(host_ids(host, 0));
  releaser.get();
  EXPECT_LE(uploads.pending(), BatchUploader::kMaxPending);
}

TEST(BatchUpload, AnInlineStreamHoldsNothing) {
  const auto device = make_cpu_device_context();
  MemoryTracker host(Device::cpu());
  BatchUploader uploads(*device);
  (void)uploads.upload(host_ids(host, 1));
  EXPECT_EQ(uploads.pending(), 0u);
  EXPECT_EQ(host.total_current_bytes(), 0);
}

}  // namespace
}  // namespace zt::engine
