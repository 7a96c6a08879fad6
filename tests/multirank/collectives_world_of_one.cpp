// A world of one: every collective works without a store or a network, results are copies,
// no bytes are counted as sent, and sequence numbers still increase.
#include <gtest/gtest.h>

#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/store.h"
#include "core/error.h"
#include "tests/multirank/collective_test_support.h"

namespace zt::comm {
namespace {

// A store that fails any use: proves a world of one never rendezvouses.
class UnusableStore final : public Store {
 public:
  void set(const std::string&, const std::string&) override { fail(); }
  std::optional<std::string> try_get(const std::string&) override { fail(); }
  std::string get(const std::string&, std::chrono::milliseconds) override { fail(); }
  std::int64_t add(const std::string&, std::int64_t) override { fail(); }
  std::string compare_set(const std::string&, const std::string&, const std::string&) override {
    fail();
  }
  bool delete_key(const std::string&) override { fail(); }
  void wait(const std::vector<std::string>&, std::chrono::milliseconds) override { fail(); }

 private:
  [[noreturn]] static void fail() { throw CommError("a world of one used the store"); }
};

TEST(WorldOfOne, EveryCollectiveWorksWithoutStoreOrNetwork) {
  UnusableStore store;
  auto comm = create_cpu_communicator(store, 0, 1, zt::testing::test_options("one"));
  EXPECT_EQ(comm->world_size(), 1);
  auto data = zt::testing::f32_values(0, 5, zt::testing::integer_pattern);
  const auto original = data;
  std::vector<float> copy(5, 0.0f);
  auto t = zt::testing::tensor_over(data, DType::kF32);
  auto c = zt::testing::tensor_over(copy, DType::kF32);

  auto w1 = comm->all_reduce(t, ReduceOp::kAvg);
  auto w2 = comm->reduce_scatter(t, c, ReduceOp::kSum);
  w1->wait();
  w2->wait();
  EXPECT_EQ(data, original);
  EXPECT_EQ(copy, original);
  std::vector<float> gathered(5, 0.0f);
  comm->all_gather(t, zt::testing::tensor_over(gathered, DType::kF32))->wait();
  EXPECT_EQ(gathered, original);
  comm->broadcast(t, 0)->wait();
  auto w5 = comm->barrier();
  w5->wait();
  std::vector<float> exchanged(original.size());
  comm->all_to_all(t, zt::testing::tensor_over(exchanged, DType::kF32))->wait();
  EXPECT_EQ(exchanged, original);

  EXPECT_EQ(w1->sequence_number(), 1u);
  EXPECT_EQ(w5->sequence_number(), 5u);
  EXPECT_EQ(w2->description(), "reduce_scatter #2 (20 B f32, sum) on rank 0 of 1");
  const CommCounters counters = comm->counters();
  for (std::size_t kind = 0; kind < kCollectiveKindCount; ++kind) {
    EXPECT_EQ(counters.bytes_sent[kind], 0u);
    EXPECT_EQ(counters.ops[kind], 1u);
  }
}

TEST(WorldOfOne, MismatchedShardSizeIsABugReportedAtOnce) {
  UnusableStore store;
  auto comm = create_cpu_communicator(store, 0, 1);
  std::vector<float> input(4), output(3);
  EXPECT_THROW(comm->reduce_scatter(zt::testing::tensor_over(input, DType::kF32),
                                    zt::testing::tensor_over(output, DType::kF32), ReduceOp::kSum),
               InternalError);
}

}  // namespace
}  // namespace zt::comm
