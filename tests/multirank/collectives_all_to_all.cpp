// all_to_all over real Gloo TCP on 127.0.0.1 (Note [Pairwise exchange]): chunk j of rank i's
// input lands in chunk i of rank j's output at world sizes 2 to 4, for f32, bf16 and i32 and
// chunks of 0, 1, odd and large sizes; each rank sends a chunk to every peer, counted per
// peer and so inside and across nodes, as the meta communicator counts it too; a world of one
// copies; mismatched operands are refused naming the operation.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/meta_communicator.h"
#include "comm/store/memory_store.h"
#include "comm/topology.h"
#include "tests/multirank/collective_test_support.h"
#include "tests/multirank/rank_threads.h"

namespace zt::comm {
namespace {

using zt::testing::run_ranks;
using zt::testing::tensor_over;
using zt::testing::test_group;
using zt::testing::test_options;

// What rank `sender` puts in element e of the chunk it sends to rank `receiver`.
float sent_value(int sender, int receiver, std::int64_t e) {
  return static_cast<float>(sender * 1000 + receiver * 100) + static_cast<float>(e % 97);
}

void check_f32_exchange(Communicator& comm, std::int64_t chunk) {
  const int n = comm.world_size();
  const int rank = comm.rank();
  std::vector<float> input(static_cast<std::size_t>(chunk * n));
  for (int to = 0; to < n; ++to) {
    for (std::int64_t e = 0; e < chunk; ++e) {
      input[static_cast<std::size_t>(to * chunk + e)] = sent_value(rank, to, e);
    }
  }
  std::vector<float> output(input.size(), -1.0f);
  comm.all_to_all(tensor_over(input, DType::kF32), tensor_over(output, DType::kF32))->wait();
  std::int64_t mismatches = 0;
  for (int from = 0; from < n; ++from) {
    for (std::int64_t e = 0; e < chunk; ++e) {
      if (output[static_cast<std::size_t>(from * chunk + e)] != sent_value(from, rank, e))
        ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0) << "chunk " << chunk << ", rank " << rank << " of " << n;
}

TEST(AllToAll, EveryChunkLandsAtItsDestinationInSenderOrderAtWorldSizes2To4) {
  for (int n : {2, 3, 4}) {
    MemoryStore store;
    run_ranks(n, [&](int rank) {
      auto comm =
          create_cpu_communicator(store, rank, n, test_options(test_group(std::to_string(n))));
      for (std::int64_t chunk : {0, 1, 7, 1003, 65537}) check_f32_exchange(*comm, chunk);
    });
  }
}

TEST(AllToAll, Bf16AndI32ChunksArriveBitForBit) {
  const int n = 3;
  const std::int64_t chunk = 10001;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
    // Rank r sends chunk j of bf16_values(r): rank j must hold chunk j of every sender's.
    auto bf16_in = zt::testing::bf16_values(rank, chunk * n);
    std::vector<std::uint16_t> bf16_out(bf16_in.size());
    std::vector<std::int32_t> words_in(static_cast<std::size_t>(chunk * n));
    for (std::size_t i = 0; i < words_in.size(); ++i) {
      words_in[i] = static_cast<std::int32_t>(0x9E3779B9u * (i + 1) + static_cast<unsigned>(rank));
    }
    std::vector<std::int32_t> words_out(words_in.size());
    comm->all_to_all(tensor_over(bf16_in, DType::kBF16), tensor_over(bf16_out, DType::kBF16));
    comm->all_to_all(tensor_over(words_in, DType::kI32), tensor_over(words_out, DType::kI32))
        ->wait();  // one ordered queue: the first op is done too
    for (int from = 0; from < n; ++from) {
      const auto theirs = zt::testing::bf16_values(from, chunk * n);
      for (std::int64_t e = 0; e < chunk; ++e) {
        const auto at = static_cast<std::size_t>(from * chunk + e);
        const auto sent_at = static_cast<std::size_t>(rank * chunk + e);
        ASSERT_EQ(bf16_out[at], theirs[sent_at]) << "bf16 from rank " << from << ", element " << e;
        ASSERT_EQ(words_out[at], static_cast<std::int32_t>(0x9E3779B9u * (sent_at + 1) +
                                                           static_cast<unsigned>(from)))
            << "i32 from rank " << from << ", element " << e;
      }
    }
  });
}

// Two nodes of 2: a rank sends one chunk to its node's other rank and one to each rank of
// the other node, so (n-1) chunks in all, 1 inside its node and 2 across; the meta
// communicator counts the same, peer by peer.
TEST(AllToAll, SendsAChunkToEveryPeerCountedByNodeAsTheMetaCommunicatorCounts) {
  const int n = 4;
  const std::int64_t chunk = 250;
  const Topology topology = Topology::blocks(n, 2);
  MemoryStore store;
  std::vector<CommCounters> gloo(n);
  run_ranks(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
    comm->place_ranks(topology.nodes_by_rank());
    check_f32_exchange(*comm, chunk);
    gloo[static_cast<std::size_t>(rank)] = comm->counters();
  });
  const std::uint64_t chunk_bytes = chunk * 4;
  for (int rank = 0; rank < n; ++rank) {
    const CommCounters& counters = gloo[static_cast<std::size_t>(rank)];
    EXPECT_EQ(counters.bytes(CollectiveKind::kAllToAll), 3 * chunk_bytes) << "rank " << rank;
    EXPECT_EQ(counters.intra_node_bytes(CollectiveKind::kAllToAll), chunk_bytes) << "rank " << rank;
    EXPECT_EQ(counters.cross_node_bytes(CollectiveKind::kAllToAll), 2 * chunk_bytes)
        << "rank " << rank;
    EXPECT_EQ(counters.ops[static_cast<std::size_t>(CollectiveKind::kAllToAll)], 1u);
    MetaCommunicator meta(rank, n, nullptr);
    meta.place_ranks(topology.nodes_by_rank());
    std::vector<float> input(static_cast<std::size_t>(chunk * n));
    std::vector<float> output(input.size());
    meta.all_to_all(tensor_over(input, DType::kF32), tensor_over(output, DType::kF32))->wait();
    EXPECT_EQ(meta.counters().bytes_sent, counters.bytes_sent) << "rank " << rank;
    EXPECT_EQ(meta.counters().cross_node_bytes_sent, counters.cross_node_bytes_sent)
        << "rank " << rank;
  }
}

TEST(AllToAll, AWorldOfOneCopiesItsChunk) {
  MemoryStore store;
  auto comm = create_cpu_communicator(store, 0, 1, test_options(test_group()));
  std::vector<float> input{1.5f, -2.0f, 3.25f};
  std::vector<float> output(3, 0.0f);
  comm->all_to_all(tensor_over(input, DType::kF32), tensor_over(output, DType::kF32))->wait();
  EXPECT_EQ(output, input);
  EXPECT_EQ(comm->counters().bytes(CollectiveKind::kAllToAll), 0u);
}

TEST(AllToAll, MismatchedOperandsAreRefusedNamingTheOperation) {
  const int n = 2;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
    std::vector<float> odd(5);
    std::vector<float> five(5);
    std::vector<float> four(4);
    std::vector<std::uint16_t> half(4);
    const auto message = [&](const std::function<void()>& call) -> std::string {
      try {
        call();
      } catch (const std::exception& e) {
        return e.what();
      }
      return "";
    };
    EXPECT_NE(message([&] {
                comm->all_to_all(tensor_over(odd, DType::kF32), tensor_over(five, DType::kF32));
              }).find("all_to_all of 5 elements into 5 among 2 ranks"),
              std::string::npos);
    EXPECT_NE(message([&] {
                comm->all_to_all(tensor_over(four, DType::kF32), tensor_over(half, DType::kBF16));
              }).find("all_to_all between f32 and bf16"),
              std::string::npos);
    Tensor whole = tensor_over(four, DType::kF32);
    EXPECT_NE(message([&] { comm->all_to_all(whole, whole); }).find("overlaps its input"),
              std::string::npos);
    comm->barrier()->wait();  // a refused op sends nothing: the ranks still meet
  });
}

}  // namespace
}  // namespace zt::comm
