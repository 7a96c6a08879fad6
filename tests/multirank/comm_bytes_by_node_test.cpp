// Bytes inside the node and across nodes (Note [Counting bytes by node]) over real Gloo TCP on
// 127.0.0.1, a world of 4 placed on two nodes of 2 (ranks 0, 1 and 2, 3): every collective
// against the ring and tree algebra, the meta communicator against Gloo for the same ops,
// split groups, and a stage-3 training step's metrics against the estimator's.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/meta_communicator.h"
#include "comm/store/memory_store.h"
#include "comm/topology.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/engine/trainer.h"
#include "runtime/estimate/memory_estimator.h"
#include "tests/multirank/collective_test_support.h"
#include "tests/multirank/rank_threads.h"
#include "tests/multirank/tiny_gpt_overrides.h"

namespace zt::comm {
namespace {

using zt::testing::run_ranks;
using zt::testing::tensor_over;
using zt::testing::test_group;
using zt::testing::test_options;

constexpr int kWorld = 4;
constexpr int kRanksPerNode = 2;
constexpr std::int64_t kCount = 10;  // uneven over 4 ranks: shards of 3, 3, 2, 2
constexpr std::uint64_t kF32 = 4;

// Every collective once (all_reduce, reduce_scatter, all_gather of kCount f32, broadcast of
// kCount f32 from rank 0) and a barrier, on any communicator of the world.
void run_every_collective(Communicator& comm) {
  const int rank = comm.rank();
  std::vector<float> values(kCount, static_cast<float>(rank));
  comm.all_reduce(tensor_over(values, DType::kF32), ReduceOp::kSum)->wait();
  std::vector<float> shard(
      static_cast<std::size_t>(shard_range(kCount, comm.world_size(), rank).count));
  comm.reduce_scatter(tensor_over(values, DType::kF32), tensor_over(shard, DType::kF32),
                      ReduceOp::kSum)
      ->wait();
  comm.all_gather(tensor_over(shard, DType::kF32), tensor_over(values, DType::kF32))->wait();
  comm.broadcast(tensor_over(values, DType::kF32), 0)->wait();
  comm.barrier()->wait();
}

// The ring algebra (Note [Ring collectives]): rank r sends all its bytes to r+1, which on two
// nodes of 2 is on another node for r = 1 (to 2) and r = 3 (to 0) only. So rank r's
// cross-node bytes are crosses(r) x (count - shard(r)) x 4 for reduce-scatter and
// crosses(r) x (count - shard(r+1)) x 4 for all-gather, all-reduce the sum of the two, and
// its inside-node bytes the rest. Broadcast from rank 0 is Gloo's binomial tree
// (gloo/broadcast.cc): rank 0 sends the buffer to 1 (same node) and to 2 (other node), rank 1
// sends it to 3 (other node), ranks 2 and 3 send nothing.
void expect_algebra(const CommCounters& counters, int rank, const Topology& topology) {
  const bool crosses = !topology.same_node(rank, (rank + 1) % kWorld);
  const std::uint64_t reduce_scatter =
      zt::testing::ring_reduce_scatter_elements_sent(kCount, kWorld, rank) * kF32;
  const std::uint64_t all_gather =
      zt::testing::ring_all_gather_elements_sent(kCount, kWorld, rank) * kF32;
  const auto expect = [&](CollectiveKind kind, std::uint64_t intra, std::uint64_t cross) {
    EXPECT_EQ(counters.intra_node_bytes(kind), intra)
        << collective_name(kind) << " inside the node, rank " << rank;
    EXPECT_EQ(counters.cross_node_bytes(kind), cross)
        << collective_name(kind) << " across nodes, rank " << rank;
    EXPECT_EQ(counters.bytes(kind), intra + cross) << collective_name(kind) << ", rank " << rank;
  };
  expect(CollectiveKind::kReduceScatter, crosses ? 0 : reduce_scatter,
         crosses ? reduce_scatter : 0);
  expect(CollectiveKind::kAllGather, crosses ? 0 : all_gather, crosses ? all_gather : 0);
  const std::uint64_t all_reduce = reduce_scatter + all_gather;
  expect(CollectiveKind::kAllReduce, crosses ? 0 : all_reduce, crosses ? all_reduce : 0);
  const std::uint64_t buffer = kCount * kF32;
  const std::uint64_t broadcast_intra[kWorld] = {buffer, 0, 0, 0};
  const std::uint64_t broadcast_cross[kWorld] = {buffer, buffer, 0, 0};
  expect(CollectiveKind::kBroadcast, broadcast_intra[rank], broadcast_cross[rank]);
  expect(CollectiveKind::kBarrier, 0, 0);
  EXPECT_EQ(counters.total_bytes(),
            counters.total_intra_node_bytes() + counters.total_cross_node_bytes());
}

TEST(CommBytesByNode, EveryCollectiveCrossesNodesWhereTheRingAndTreeSay) {
  MemoryStore store;
  const Topology topology = Topology::blocks(kWorld, kRanksPerNode);
  std::vector<CommCounters> gloo(kWorld);
  std::vector<CommCounters> meta(kWorld);
  std::vector<CommCounters> meta_unplaced(kWorld);
  run_ranks(kWorld, [&](int rank) {
    auto world = create_cpu_communicator(store, rank, kWorld, test_options(test_group()));
    world->place_ranks(topology.nodes_by_rank());
    run_every_collective(*world);
    gloo[static_cast<std::size_t>(rank)] = world->counters();
  });
  for (int rank = 0; rank < kWorld; ++rank) {
    MetaCommunicator placed(rank, kWorld, nullptr);
    placed.place_ranks(topology.nodes_by_rank());
    run_every_collective(placed);
    meta[static_cast<std::size_t>(rank)] = placed.counters();
    MetaCommunicator unplaced(rank, kWorld, nullptr);
    run_every_collective(unplaced);
    meta_unplaced[static_cast<std::size_t>(rank)] = unplaced.counters();
  }
  for (int rank = 0; rank < kWorld; ++rank) {
    const auto r = static_cast<std::size_t>(rank);
    expect_algebra(gloo[r], rank, topology);
    // The estimator's communicator counts what Gloo sent, op for op.
    EXPECT_EQ(meta[r].bytes_sent, gloo[r].bytes_sent) << "rank " << rank;
    EXPECT_EQ(meta[r].cross_node_bytes_sent, gloo[r].cross_node_bytes_sent) << "rank " << rank;
    EXPECT_EQ(meta[r].ops, gloo[r].ops) << "rank " << rank;
    // Unplaced, every rank is on one node: the same bytes, none across.
    EXPECT_EQ(meta_unplaced[r].bytes_sent, gloo[r].bytes_sent) << "rank " << rank;
    EXPECT_EQ(meta_unplaced[r].total_cross_node_bytes(), 0u) << "rank " << rank;
  }
}

// A split's communicator counts by its members' nodes, inherited from the parent's: the
// node-local groups send nothing across, the cross-node groups (ranks 0, 2 and 1, 3)
// nothing inside.
TEST(CommBytesByNode, SplitGroupsCountByTheirMembersNodes) {
  MemoryStore store;
  const Topology topology = Topology::blocks(kWorld, kRanksPerNode);
  run_ranks(kWorld, [&](int rank) {
    auto world = create_cpu_communicator(store, rank, kWorld, test_options(test_group()));
    world->place_ranks(topology.nodes_by_rank());
    auto node_local = world->split(topology.node_of(rank), topology.local_rank_of(rank));
    auto across = world->split(topology.local_rank_of(rank), topology.node_of(rank));
    ASSERT_NE(node_local, nullptr);
    ASSERT_NE(across, nullptr);
    run_every_collective(*node_local);
    run_every_collective(*across);
    const CommCounters inside = node_local->counters();
    const CommCounters between = across->counters();
    EXPECT_GT(inside.total_bytes(), 0u);
    EXPECT_EQ(inside.total_cross_node_bytes(), 0u) << "rank " << rank;
    EXPECT_GT(between.total_bytes(), 0u);
    EXPECT_EQ(between.total_intra_node_bytes(), 0u) << "rank " << rank;
  });
}

Config stage3_config() {
  return parse_config_text("", "bytes_by_node.toml", zt::testing::tiny_run_overrides(3, 2));
}

// A stage-3 step on two nodes of 2: each rank's metrics split its bytes by node, the two parts
// add up to every collective's bytes, only ranks 1 and 3 (whose ring neighbour is on the other
// node) send across, and the estimator, told 2 ranks per node, predicts both parts exactly.
TEST(CommBytesByNode, Stage3StepMetricsSplitBytesAsTheEstimatorPredicts) {
  nn::cpu::set_blas_threads(1);
  MemoryStore store;
  const Topology topology = Topology::blocks(kWorld, kRanksPerNode);
  const Config config = stage3_config();
  std::vector<engine::StepMetrics> last(kWorld);
  run_ranks(kWorld, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    auto comm = create_cpu_communicator(store, rank, kWorld, test_options(test_group()));
    comm->place_ranks(topology.nodes_by_rank());
    engine::Trainer trainer(config, *comm, tracker, engine::quiet_trainer_options());
    last[static_cast<std::size_t>(rank)] = trainer.run().metrics.back();
    comm->barrier()->wait();
  });
  estimate::EstimateOptions two_per_node;
  two_per_node.ranks_per_node = kRanksPerNode;
  for (int rank = 0; rank < kWorld; ++rank) {
    const engine::StepMetrics& m = last[static_cast<std::size_t>(rank)];
    const std::uint64_t sent =
        m.all_reduce_bytes + m.reduce_scatter_bytes + m.all_gather_bytes + m.all_to_all_bytes;
    EXPECT_GT(sent, 0u);
    EXPECT_EQ(m.intra_node_bytes + m.cross_node_bytes, sent) << "rank " << rank;
    const bool crosses = !topology.same_node(rank, (rank + 1) % kWorld);
    EXPECT_EQ(m.cross_node_bytes, crosses ? sent : 0u) << "rank " << rank;
    const estimate::RankEstimate estimated =
        estimate::estimate_rank(config, kWorld, rank, two_per_node);
    EXPECT_EQ(estimated.node_count, 2);
    EXPECT_EQ(estimated.cross_node_bytes_per_step, static_cast<std::int64_t>(m.cross_node_bytes))
        << "rank " << rank;
    EXPECT_EQ(estimated.intra_node_bytes_per_step, static_cast<std::int64_t>(m.intra_node_bytes))
        << "rank " << rank;
  }
}

}  // namespace
}  // namespace zt::comm
