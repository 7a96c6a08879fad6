// offload.optimizer = "nvme" on both I/O paths (io_uring and the worker thread): the state
// file's transfers round-trip, and the offloaded optimizer's masters and compute-dtype copy
// are bitwise those of host-memory states (same CPU Adam or SGD loop, same sub-groups), with
// only the in-flight sub-groups' states in host memory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/device/device_context.h"
#include "core/random.h"
#include "offload/aligned_host_buffer.h"
#include "offload/async_file_io.h"
#include "offload/nvme_state_file.h"
#include "offload/offloaded_optimizer.h"
#include "optim/optimizer.h"

namespace zt::offload {

// Names the I/O path in googletest's messages (found by argument-dependent lookup).
void PrintTo(FileIoPath io, std::ostream* out) {
  *out << (io == FileIoPath::kBest ? "best (io_uring first)" : "worker thread");
}

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kSeed = 20261203;

std::string fresh_directory(const std::string& name) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("zt_nvme_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

class NvmeIoPaths : public ::testing::TestWithParam<FileIoPath> {};

std::string path_name(const ::testing::TestParamInfo<FileIoPath>& info) {
  return info.param == FileIoPath::kBest ? "Best" : "WorkerThread";
}

TEST_P(NvmeIoPaths, WritesThenReadsBackManyBlocksInFlight) {
  NvmeStateFile file(fresh_directory("io"), 8 << 20);
  auto io = make_async_file_io(file.fd(), file.path(), GetParam());
  if (GetParam() == FileIoPath::kWorkerThread) {
    EXPECT_EQ(io->name().rfind("worker thread", 0), 0u) << io->name();
  }
  std::printf("I/O path: %s\n", io->name().c_str());
  MemoryTracker tracker(Device::cpu());
  constexpr int kBlocks = 4;
  constexpr std::int64_t kBytes = 2 << 20;
  std::vector<AlignedHostBuffer> out, in;
  std::vector<std::uint64_t> tickets;
  for (int b = 0; b < kBlocks; ++b) {
    out.emplace_back(kBytes, tracker, MemoryCategory::kHostOffload);
    in.emplace_back(kBytes, tracker, MemoryCategory::kHostOffload);
    for (std::int64_t i = 0; i < kBytes / 4; ++i)
      out[b].floats()[i] = static_cast<float>(b * kBytes + i);
    tickets.push_back(io->start_write(out[b].data(), kBytes, b * kBytes));
  }
  for (std::uint64_t t : tickets) io->wait(t);
  tickets.clear();
  for (int b = kBlocks - 1; b >= 0; --b)
    tickets.push_back(io->start_read(in[b].data(), kBytes, b * kBytes));
  for (auto it = tickets.rbegin(); it != tickets.rend(); ++it) io->wait(*it);
  for (int b = 0; b < kBlocks; ++b) {
    EXPECT_EQ(std::memcmp(in[b].data(), out[b].data(), kBytes), 0) << "block " << b;
  }
  EXPECT_EQ(tracker.snapshot().peak_bytes[static_cast<std::size_t>(MemoryCategory::kHostOffload)],
            2 * kBlocks * kBytes);
}

TEST_P(NvmeIoPaths, ReadPastTheFileIsAnIoErrorNamingTheFile) {
  NvmeStateFile file(fresh_directory("io_error"), 4096);
  auto io = make_async_file_io(file.fd(), file.path(), GetParam());
  MemoryTracker tracker(Device::cpu());
  AlignedHostBuffer buffer(4096, tracker, MemoryCategory::kHostOffload);
  const std::uint64_t ticket = io->start_read(buffer.data(), 4096, 1 << 20);
  try {
    io->wait(ticket);
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(file.path()), std::string::npos) << e.what();
  }
}

struct UpdateRun {
  std::vector<float> master;
  std::vector<std::uint16_t> compute;  // bf16 parameters sent back
  std::int64_t host_peak = 0;
  std::int64_t nvme_buffers = 0;  // the in-flight sub-groups' host bytes
  std::int64_t sub_groups = 0;
  bool moved = false;  // the masters changed: the comparison is not vacuous
};

// kSteps updates of a shard of kShard elements (5 sub-groups, the last short) from the
// same gradients, with states in host memory ("cpu") or on NVMe through `io`.
UpdateRun run_updates(OptimizerType type, OffloadTarget target, FileIoPath io, int threads,
                      double momentum = 0.9) {
  constexpr std::int64_t kShard = 4 * 1024 + 517;
  constexpr int kSteps = 4;
  OptimizerConfig optimizer_config;
  optimizer_config.type = type;
  optimizer_config.lr = 0.01;
  optimizer_config.momentum = momentum;
  optimizer_config.beta1 = 0.9;
  optimizer_config.beta2 = 0.999;
  optimizer_config.eps = 1e-8;
  optimizer_config.weight_decay = 0.01;
  const auto optimizer = optim::make_optimizer(optimizer_config);
  OffloadConfig config;
  config.optimizer = target;
  config.sub_group_size = 1024;
  config.cpu_threads = threads;
  if (target == OffloadTarget::kNvme) config.nvme_path = fresh_directory("updates");
  MemoryTracker device_tracker(Device::cpu());
  auto device = make_cpu_device_context(device_tracker);
  OffloadedOptimizer offloaded(*device, *optimizer, kShard, DType::kBF16, config, io);
  std::vector<float> init(kShard), grads(kShard);
  for (std::int64_t i = 0; i < kShard; ++i) init[i] = standard_normal(kSeed, i);
  std::memcpy(offloaded.master().data(), init.data(), init.size() * sizeof(float));
  const Tensor device_grads = Tensor::wrap(grads.data(), Shape{kShard}, DType::kF32);
  for (int step = 1; step <= kSteps; ++step) {
    for (std::int64_t i = 0; i < kShard; ++i) grads[i] = standard_normal(kSeed + step, i);
    offloaded.stage_gradients(0, device_grads, /*source_reused=*/false);
    offloaded.update(step, 0.01f);
  }
  UpdateRun run;
  run.moved = std::memcmp(offloaded.master().data(), init.data(), init.size() * 4) != 0;
  run.master.assign(offloaded.master().data_as<float>(),
                    offloaded.master().data_as<float>() + kShard);
  run.compute.resize(kShard);
  const Tensor params = Tensor::wrap(run.compute.data(), Shape{kShard}, DType::kBF16);
  offloaded.send_parameters(0, params);
  offloaded.wait_for_sends();
  run.host_peak = offloaded.host_tracker()
                      .snapshot()
                      .peak_bytes[static_cast<std::size_t>(MemoryCategory::kHostOffload)];
  if (offloaded.nvme() != nullptr) {
    run.nvme_buffers = offloaded.nvme()->buffer_bytes();
    run.sub_groups = offloaded.nvme()->sub_groups();
  }
  return run;
}

TEST_P(NvmeIoPaths, UpdatesAreBitwiseThoseOfHostStatesForAdamWAndSgd) {
  for (OptimizerType type : {OptimizerType::kAdamW, OptimizerType::kSgd}) {
    for (int threads : {1, 2}) {
      const UpdateRun host = run_updates(type, OffloadTarget::kCpu, GetParam(), threads);
      const UpdateRun nvme = run_updates(type, OffloadTarget::kNvme, GetParam(), threads);
      const std::string what = std::string(type == OptimizerType::kSgd ? "sgd" : "adamw") + " x " +
                               std::to_string(threads) + " threads";
      EXPECT_EQ(std::memcmp(host.master.data(), nvme.master.data(), host.master.size() * 4), 0)
          << what;
      EXPECT_EQ(host.compute, nvme.compute) << what;
      EXPECT_TRUE(host.moved && nvme.moved) << what;
      // Three sub-groups' states in flight (each state padded to 4 KiB) replace the shard's.
      const int states = type == OptimizerType::kSgd ? 1 : 2;
      EXPECT_EQ(nvme.sub_groups, 5);
      EXPECT_EQ(nvme.nvme_buffers, 3 * states * 4096);
      const std::int64_t shard_state_bytes = states * (4 * 1024 + 517) * 4;
      EXPECT_EQ(nvme.host_peak, host.host_peak - shard_state_bytes + nvme.nvme_buffers) << what;
    }
  }
}

TEST_P(NvmeIoPaths, SgdWithoutMomentumHasNoStatesAndStillUpdates) {
  const UpdateRun host = run_updates(OptimizerType::kSgd, OffloadTarget::kCpu, GetParam(), 1, 0);
  const UpdateRun nvme = run_updates(OptimizerType::kSgd, OffloadTarget::kNvme, GetParam(), 1, 0);
  EXPECT_TRUE(nvme.moved);
  EXPECT_EQ(std::memcmp(host.master.data(), nvme.master.data(), host.master.size() * 4), 0);
  EXPECT_EQ(nvme.nvme_buffers, 0);
  EXPECT_EQ(nvme.host_peak, host.host_peak);
}

INSTANTIATE_TEST_SUITE_P(BothPaths, NvmeIoPaths,
                         ::testing::Values(FileIoPath::kBest, FileIoPath::kWorkerThread),
                         path_name);

}  // namespace
}  // namespace zt::offload
