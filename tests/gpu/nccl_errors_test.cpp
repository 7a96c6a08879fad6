// NCCL failures read as the Gloo backend's do: the call, NCCL's own error string and last
// error, and the rank; the rendezvous names rank 0 when it never publishes the unique id.
// The message and rendezvous tests need no GPU (they run wherever NCCL is built in); the
// invalid-root test asks a real communicator and skips without a GPU.
#if defined(ZT_HAVE_NCCL)

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "comm/nccl/nccl_errors_internal.h"
#include "comm/nccl/nccl_rendezvous_internal.h"
#include "comm/store/memory_store.h"
#include "core/error.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::comm {
namespace {

TEST(NcclErrors, MessageNamesTheCallNcclsErrorAndTheRank) {
  const std::string message = nccl_error_message(
      ncclInvalidArgument, "ncclBroadcast(buffer, buffer, 4, ncclInt8, 5, comm, stream)", nullptr,
      "on rank 3 of 4 (group world, cuda:1)");
  EXPECT_EQ(message.rfind(
                "ncclBroadcast failed: " + std::string(ncclGetErrorString(ncclInvalidArgument)), 0),
            0u)
      << message;
  EXPECT_NE(message.find("on rank 3 of 4 (group world, cuda:1)"), std::string::npos) << message;
  EXPECT_EQ(message.find("(buffer"), std::string::npos)
      << "the arguments are left out: " << message;
}

TEST(NcclErrors, InProgressIsNotAFailureAndErrorsAreCommErrors) {
  EXPECT_EQ(check_nccl(ncclSuccess, "ncclAllReduce", nullptr, ""), ncclSuccess);
  EXPECT_EQ(check_nccl(ncclInProgress, "ncclAllReduce", nullptr, ""), ncclInProgress);
  EXPECT_THROW(check_nccl(ncclSystemError, "ncclAllReduce", nullptr, "on rank 0 of 2"), CommError);
  try {
    ZT_COMM_CUDA_CHECK(cudaErrorInvalidValue, "on rank 1 of 2");
    ADD_FAILURE() << "a CUDA error passed";
  } catch (const CommError& e) {
    EXPECT_NE(std::string(e.what()).find(cudaGetErrorString(cudaErrorInvalidValue)),
              std::string::npos)
        << e.what();
  }
}

TEST(NcclErrors, InvalidRootIsRefusedByNcclWithItsLastError) {
  ZT_SKIP_WITHOUT_GPU();
  ncclComm_t comm = nullptr;
  int devices[] = {0};
  ASSERT_EQ(ncclCommInitAll(&comm, 1, devices), ncclSuccess);
  gpu_test::DeviceBuffer<float> buffer(16);
  try {
    ZT_NCCL_CHECK(ncclBroadcast(buffer.get(), buffer.get(), 16, ncclFloat32, 5, comm, nullptr),
                  comm, "on rank 0 of 1");
    ADD_FAILURE() << "NCCL accepted root 5 of 1";
  } catch (const CommError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("ncclBroadcast failed: ", 0), 0u) << message;
    EXPECT_NE(message.find(ncclGetErrorString(ncclInvalidArgument)), std::string::npos) << message;
    EXPECT_NE(message.find("on rank 0 of 1"), std::string::npos) << message;
  }
  ncclCommDestroy(comm);
}

TEST(NcclRendezvous, RankZeroThatNeverPublishesIsNamedAfterTheTimeout) {
  MemoryStore store;
  const auto start = std::chrono::steady_clock::now();
  try {
    exchange_unique_id(store, "gloo/g/", 1, std::chrono::milliseconds(200),
                       "NCCL rendezvous on rank 1 of 2");
    ADD_FAILURE() << "a unique id appeared from nowhere";
  } catch (const TimeoutError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("NCCL rendezvous on rank 1 of 2: rank 0 never published the NCCL "
                           "unique id (store key 'gloo/g/nccl_unique_id') within 200 ms"),
              std::string::npos)
        << message;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(NcclRendezvous, AMalformedIdIsRefused) {
  MemoryStore store;
  store.set(unique_id_key("gloo/g/"), "short");
  EXPECT_THROW(exchange_unique_id(store, "gloo/g/", 1, std::chrono::milliseconds(200), "rank 1"),
               CommError);
}

}  // namespace
}  // namespace zt::comm

#endif  // ZT_HAVE_NCCL
