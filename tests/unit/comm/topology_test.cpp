// Topology from what each rank reports (launcher node indices, or host names numbered by
// first appearance), its queries, and the exchange of the reports through a store.
#include "comm/topology.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "comm/store/memory_store.h"
#include "comm/topology_exchange.h"
#include "core/error.h"

namespace zt::comm {
namespace {

NodeIdentity launched(int node, int local, const std::string& host) { return {node, local, host}; }
NodeIdentity host_only(const std::string& host) { return {std::nullopt, std::nullopt, host}; }

TEST(Topology, LauncherNodeIndicesWinOverHostNames) {
  // Two network namespaces of one host: every rank has the same host name.
  const Topology topology = Topology::from_identities(
      {launched(0, 0, "h"), launched(0, 1, "h"), launched(1, 0, "h"), launched(1, 1, "h")});
  EXPECT_EQ(topology.node_count(), 2);
  EXPECT_EQ(topology.node_of(1), 0);
  EXPECT_EQ(topology.node_of(2), 1);
  EXPECT_EQ(topology.local_rank_of(3), 1);
  EXPECT_TRUE(topology.same_node(2, 3));
  EXPECT_FALSE(topology.same_node(1, 2));
  EXPECT_EQ(topology.ranks_on(1), (std::vector<int>{2, 3}));
  EXPECT_EQ(topology.describe(), "2 nodes of 2 ranks");
}

TEST(Topology, SparseLauncherIndicesAreRenumberedInOrder) {
  const Topology topology =
      Topology::from_identities({launched(4, 0, "a"), launched(2, 0, "b"), launched(4, 1, "a")});
  EXPECT_EQ(topology.node_of(0), 1);
  EXPECT_EQ(topology.node_of(1), 0);
  EXPECT_EQ(topology.ranks_on(1), (std::vector<int>{0, 2}));
}

TEST(Topology, HostNamesAreNumberedByFirstAppearanceInRankOrder) {
  // Open MPI with --map-by node: ranks alternate between hosts; no node index exported.
  const Topology topology = Topology::from_identities(
      {host_only("zeta"), host_only("alpha"), host_only("zeta"), host_only("alpha")});
  EXPECT_EQ(topology.node_of(0), 0);  // rank 0's host is node 0, whatever its name
  EXPECT_EQ(topology.node_of(1), 1);
  EXPECT_EQ(topology.node_of(2), 0);
  EXPECT_EQ(topology.local_rank_of(2), 1);  // its place among node 0's ranks
  EXPECT_EQ(topology.ranks_on(1), (std::vector<int>{1, 3}));
}

TEST(Topology, OneRankWithoutANodeIndexMakesEveryRankUseHostNames) {
  const Topology topology =
      Topology::from_identities({launched(1, 0, "a"), {std::nullopt, 0, "b"}, launched(0, 1, "a")});
  EXPECT_EQ(topology.node_of(0), 0);
  EXPECT_EQ(topology.node_of(1), 1);
  EXPECT_EQ(topology.node_of(2), 0);
  EXPECT_EQ(topology.local_rank_of(2), 1);  // the launcher's local ranks still fit: kept
}

TEST(Topology, LauncherLocalRanksAreKeptWhenTheyNumberTheNode) {
  // Slurm with a cyclic distribution on one node's view: local ranks not in rank order.
  const Topology topology = Topology::from_identities({launched(0, 1, "a"), launched(0, 0, "a")});
  EXPECT_EQ(topology.local_rank_of(0), 1);
  EXPECT_EQ(topology.ranks_on(0), (std::vector<int>{1, 0}));
}

TEST(Topology, TwoRanksClaimingOneLocalRankAreRefusedNamingTheNode) {
  try {
    Topology::from_identities({launched(0, 0, "a"), launched(0, 0, "a")});
    FAIL() << "no CommError";
  } catch (const CommError& e) {
    EXPECT_NE(std::string(e.what()).find("local rank 0"), std::string::npos) << e.what();
  }
}

TEST(Topology, UnequalNodesAreRepresentable) {
  const Topology topology = Topology::from_identities(
      {host_only("a"), host_only("a"), host_only("a"), host_only("b"), host_only("b")});
  EXPECT_FALSE(topology.equal_nodes());
  EXPECT_EQ(topology.ranks_per_node(0), 3);
  EXPECT_EQ(topology.ranks_per_node(1), 2);
  EXPECT_EQ(topology.describe(), "2 nodes of 3, 2 ranks");
}

TEST(Topology, BlocksPlaceRanksAsTheLauncherDoes) {
  const Topology topology = Topology::blocks(7, 4);
  EXPECT_EQ(topology.node_count(), 2);
  EXPECT_EQ(topology.node_of(3), 0);
  EXPECT_EQ(topology.node_of(4), 1);
  EXPECT_EQ(topology.local_rank_of(6), 2);
  EXPECT_EQ(Topology::single_node(3).describe(), "1 node of 3 ranks");
}

TEST(TopologyExchange, EveryRankBuildsTheSameTopology) {
  MemoryStore store;
  const int world = 4;
  std::vector<std::optional<Topology>> seen(world);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < world; ++rank) {
    ranks.emplace_back([&, rank] {
      // Hosts as Open MPI would leave them: node from the name, local rank from the launcher.
      const NodeIdentity mine{std::nullopt, rank / 2, rank % 2 == 0 ? "even" : "odd"};
      seen[static_cast<std::size_t>(rank)] =
          exchange_topology(store, "t/", rank, world, mine, std::chrono::seconds(10));
    });
  }
  for (std::thread& rank : ranks) rank.join();
  for (const std::optional<Topology>& topology : seen) {
    ASSERT_TRUE(topology.has_value());
    EXPECT_EQ(topology->ranks_on(0), (std::vector<int>{0, 2}));
    EXPECT_EQ(topology->ranks_on(1), (std::vector<int>{1, 3}));
  }
}

TEST(TopologyExchange, AMissingRankTimesOutNamingItsKey) {
  MemoryStore store;
  try {
    exchange_topology(store, "t/", 0, 2, host_only("a"), std::chrono::milliseconds(50));
    FAIL() << "no TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("t/topology/1"), std::string::npos) << e.what();
  }
}

TEST(TopologyExchange, HostNameIsNotEmpty) { EXPECT_FALSE(this_host_name().empty()); }

}  // namespace
}  // namespace zt::comm
