// Choosing a backend: NCCL without a CUDA device (or in a build without NCCL) is a config
// error naming comm.backend; tensors where the communicator cannot reach them are refused
// naming the device; the Gloo world of one orders its copies after the compute stream.
#include "comm/communicator_factory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "comm/comm_lanes.h"
#include "comm/store/memory_store.h"
#include "core/error.h"
#include "core/tensor.h"
#include "tests/support/worker_compute_context.h"

namespace zt::comm {
namespace {

TEST(CommBackend, NcclWithoutACudaDeviceIsAConfigErrorNamingTheKey) {
  MemoryStore store;
  auto cpu = make_cpu_device_context();
  for (DeviceContext* device : {static_cast<DeviceContext*>(nullptr), cpu.get()}) {
    CommOptions options;
    options.backend = CommBackend::kNccl;
    options.device = device;
    try {
      create_communicator(store, 0, 1, options);
      ADD_FAILURE() << "an NCCL communicator without a CUDA device";
    } catch (const ConfigError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("comm.backend = \"nccl\""), std::string::npos) << message;
      // A build with NCCL names the device; one without says so first.
      const std::string reason = nccl_backend_built() ? "moves CUDA tensors only" : "without NCCL";
      EXPECT_NE(message.find(reason), std::string::npos) << message;
    }
    EXPECT_THROW(create_comm_lanes(store, 0, 1, options), ConfigError);
  }
}

TEST(CommBackend, NamesAreTheConfigValues) {
  EXPECT_EQ(comm_backend_name(CommBackend::kGloo), "gloo");
  EXPECT_EQ(comm_backend_name(CommBackend::kNccl), "nccl");
#if defined(ZT_HAVE_NCCL)
  EXPECT_TRUE(nccl_backend_built());
#else
  EXPECT_FALSE(nccl_backend_built());
#endif
}

TEST(CommBackend, CpuFactoriesRefuseNccl) {
  MemoryStore store;
  CommOptions options;
  options.backend = CommBackend::kNccl;
  EXPECT_THROW(create_cpu_communicator(store, 0, 1, options), InternalError);
  EXPECT_THROW(create_cpu_comm_lanes(store, 0, 1, options), InternalError);
}

TEST(CommTensors, DeviceTensorOnAHostCommunicatorIsRefusedNamingTheDevice) {
  MemoryStore store;
  auto comm = create_communicator(store, 0, 1);
  std::vector<float> values(4, 1.0f);
  // Never dereferenced: the check refuses it first.
  const Tensor on_gpu = Tensor::wrap(values.data(), Shape{4}, DType::kF32, Device::cuda(0));
  try {
    comm->all_reduce(on_gpu, ReduceOp::kSum);
    ADD_FAILURE() << "a cuda:0 tensor was accepted without a device";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("all_reduce tensor is on cuda:0; the Gloo communicator "
                                         "moves CPU tensors only"),
              std::string::npos)
        << e.what();
  }
}

TEST(CommStreams, WorldOfOneCopiesAfterTheProducerOnTheComputeStream) {
  MemoryStore store;
  zt::testing::WorkerComputeContext device;
  CommOptions options;
  options.device = &device;
  auto comm = create_communicator(store, 0, 1, options);
  std::vector<float> input(6, 0.0f), output(6, -1.0f);
  // Pending on the compute stream when the op is submitted, and for a while after: the
  // producer runs only once `opened` is, 50 ms later (the delay makes a copy that ran too
  // early visible; the right copy waits however long it takes).
  std::latch opened(1);
  device.worker().enqueue([&] {
    opened.wait();
    std::fill(input.begin(), input.end(), 5.0f);
  });
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    opened.count_down();
  });
  comm->all_gather(Tensor::wrap(input.data(), Shape{6}, DType::kF32),
                   Tensor::wrap(output.data(), Shape{6}, DType::kF32))
      ->wait();
  opener.join();
  EXPECT_EQ(output, std::vector<float>(6, 5.0f));
}

}  // namespace
}  // namespace zt::comm
