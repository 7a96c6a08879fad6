// RendezvousStore over real TCP on loopback: rank 0 serves the store until every rank has
// finished, a port in use and an absent rank 0 are errors that say what to do.
#include "runtime/launch/rendezvous_store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>

#include "comm/store/tcp_store_server.h"
#include "core/error.h"

namespace zt::launch {
namespace {

using namespace std::chrono_literals;

// A free port: a server on port 0 picks one, and is gone when this returns.
int unused_port() { return comm::TcpStoreServer("127.0.0.1", 0, "").port(); }

RankEnv rank_of_two(int rank, int port) {
  RankEnv env;
  env.rank = rank;
  env.local_rank = rank;
  env.world_size = 2;
  env.local_world_size = 2;
  env.master_addr = "127.0.0.1";
  env.master_port = port;
  env.master_addr_origin = "set by MASTER_ADDR";
  env.master_port_origin = "derived from SLURM_JOB_ID and SLURM_STEP_ID";
  env.store_host = StoreHost::kRankZero;
  env.store_bind_address = "127.0.0.1";
  env.store_token = "slurm-job-1.0";
  env.source = "Slurm";
  return env;
}

TEST(RendezvousStore, RankZeroServesAndBothRanksShareKeys) {
  const int port = unused_port();
  RendezvousStore rank0(rank_of_two(0, port), 5s);
  RendezvousStore rank1(rank_of_two(1, port), 5s);
  rank1.store().set("k", "from rank 1");
  EXPECT_EQ(rank0.store().get("k", 1s), "from rank 1");
}

TEST(RendezvousStore, RankZeroFinishesOnlyAfterEveryRankHas) {
  const int port = unused_port();
  RendezvousStore rank0(rank_of_two(0, port), 5s);
  RendezvousStore rank1(rank_of_two(1, port), 5s);
  try {
    rank0.finish(100ms);
    ADD_FAILURE() << "rank 0 finished while rank 1 had not";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("rank_done/1"), std::string::npos) << e.what();
  }
  auto rank0_done = std::async(std::launch::async, [&] { rank0.finish(5s); });
  rank1.finish(5s);
  EXPECT_EQ(rank0_done.wait_for(5s), std::future_status::ready);
  rank0_done.get();
}

TEST(RendezvousStore, APortInUseSaysWhereItCameFromAndWhatToSet) {
  const comm::TcpStoreServer squatter("127.0.0.1", 0, "other");
  try {
    RendezvousStore rank0(rank_of_two(0, squatter.port()), 1s);
    ADD_FAILURE() << "rank 0 served on a port in use";
  } catch (const CommError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("derived from SLURM_JOB_ID"), std::string::npos) << message;
    EXPECT_NE(message.find("export MASTER_PORT="), std::string::npos) << message;
  }
}

TEST(RendezvousStore, WithoutRankZeroOtherRanksTimeOutNamingWhereTheyLooked) {
  const int port = unused_port();
  try {
    RendezvousStore rank1(rank_of_two(1, port), 300ms);
    ADD_FAILURE() << "rank 1 connected to nobody";
  } catch (const TimeoutError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("rank 0 serves the store at 127.0.0.1:" + std::to_string(port)),
              std::string::npos)
        << message;
  }
}

TEST(RendezvousStore, AJobWithAnotherTokenIsRefused) {
  const int port = unused_port();
  RendezvousStore rank0(rank_of_two(0, port), 5s);
  RankEnv stranger = rank_of_two(1, port);
  stranger.store_token = "slurm-job-2.0";
  EXPECT_THROW(RendezvousStore(stranger, 1s), CommError);
}

}  // namespace
}  // namespace zt::launch
