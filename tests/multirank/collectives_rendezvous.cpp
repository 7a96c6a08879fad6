// Rendezvous through the store: several groups share one store at once, and a group name
// can be used again once every rank destroyed its communicator (the keys are cleaned up).
#include <gtest/gtest.h>

#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "tests/multirank/collective_test_support.h"
#include "tests/multirank/rank_threads.h"

namespace zt::comm {
namespace {

using zt::testing::run_ranks;
using zt::testing::test_group;
using zt::testing::test_options;

float all_reduce_one(Communicator& comm, float value) {
  std::vector<float> data = {value};
  comm.all_reduce(zt::testing::tensor_over(data, DType::kF32), ReduceOp::kSum)->wait();
  return data[0];
}

TEST(Rendezvous, TwoGroupsShareOneStoreAtOnce) {
  const int n = 3;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto world = create_cpu_communicator(store, rank, n, test_options(test_group("/world")));
    auto other = create_cpu_communicator(store, rank, n, test_options(test_group("/other")));
    EXPECT_EQ(all_reduce_one(*world, 1.0f), 3.0f);
    EXPECT_EQ(all_reduce_one(*other, static_cast<float>(rank)), 3.0f);
  });
}

TEST(Rendezvous, GroupNameCanBeReusedAfterEveryRankDestroyedIt) {
  const int n = 2;
  MemoryStore store;
  for (int round = 0; round < 2; ++round) {
    run_ranks(n, [&](int rank) {
      auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
      EXPECT_EQ(all_reduce_one(*comm, 2.0f), 4.0f);
    });
  }
  EXPECT_FALSE(store.try_get("gloo/" + test_group() + "/rank_0").has_value());
}

}  // namespace
}  // namespace zt::comm
