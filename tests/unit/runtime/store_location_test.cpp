// Where the store is when no launcher serves it: rank 0's, at MASTER_ADDR:MASTER_PORT or
// the defaults Slurm and Open MPI allow; the token policy; torchrun refused by name.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/error.h"
#include "runtime/launch/rank_env.h"

namespace zt::launch {
namespace {

using Env = std::map<std::string, std::string>;

RankEnv read(const Env& env) {
  std::optional<RankEnv> rank =
      read_rank_env([&](const std::string& name) -> std::optional<std::string> {
        const auto it = env.find(name);
        if (it == env.end()) return std::nullopt;
        return it->second;
      });
  EXPECT_TRUE(rank.has_value());
  return rank.value_or(RankEnv{});
}

std::string usage_error(const Env& env) {
  try {
    read(env);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UsageError";
  return "";
}

Env with(Env env, const Env& more) {
  for (const auto& [name, value] : more) env[name] = value;
  return env;
}

Env without(Env env, const std::string& name) {
  env.erase(name);
  return env;
}

const Env kTorchrunNames{{"RANK", "1"},
                         {"LOCAL_RANK", "1"},
                         {"WORLD_SIZE", "2"},
                         {"LOCAL_WORLD_SIZE", "2"},
                         {"MASTER_ADDR", "node0"},
                         {"MASTER_PORT", "29500"}};

// srun -n 2 on one host, as Slurm 22.05 sets it for task `rank`.
Env slurm_one_host(int rank) {
  return {{"SLURM_PROCID", std::to_string(rank)},
          {"SLURM_LOCALID", std::to_string(rank)},
          {"SLURM_NTASKS", "2"},
          {"SLURM_TASKS_PER_NODE", "2"},
          {"SLURM_JOB_ID", "417"},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_STEP_NODELIST", "vm"},
          {"SLURMD_NODENAME", "vm"}};
}

// srun -N 2 -n 4: two tasks on each of node[3-4].
Env slurm_two_hosts(int rank) {
  const std::string node = rank < 2 ? "node3" : "node4";
  return {{"SLURM_PROCID", std::to_string(rank)},
          {"SLURM_LOCALID", std::to_string(rank % 2)},
          {"SLURM_NTASKS", "4"},
          {"SLURM_TASKS_PER_NODE", "2(x2)"},
          {"SLURM_JOB_ID", "9001"},
          {"SLURM_STEP_ID", "3"},
          {"SLURM_STEP_NODELIST", "node[3-4]"},
          {"SLURM_JOB_NODELIST", "node[1-8]"},
          {"SLURMD_NODENAME", node},
          {"ZEROTRAIN_STORE_TOKEN", "secret"}};
}

Env open_mpi_one_host(int rank) {
  return {{"OMPI_COMM_WORLD_RANK", std::to_string(rank)},
          {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank)},
          {"OMPI_COMM_WORLD_SIZE", "2"},
          {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
          {"OMPI_MCA_ess_base_jobid", "667025409"},
          {"PMIX_NAMESPACE", "667025409"}};
}

TEST(StoreLocation, TheLaunchersMarkerMeansTheLauncherServesTheStore) {
  const RankEnv env = read(with(
      kTorchrunNames, {{"ZEROTRAIN_LAUNCHER_HOSTS_STORE", "1"}, {"ZEROTRAIN_STORE_TOKEN", "abc"}}));
  EXPECT_EQ(env.store_host, StoreHost::kLauncher);
  EXPECT_EQ(env.store_token, "abc");
}

TEST(StoreLocation, AMarkerBesideSlurmsVariablesAloneIsIgnored) {
  const RankEnv env = read(with(slurm_one_host(0), {{"ZEROTRAIN_LAUNCHER_HOSTS_STORE", "1"}}));
  EXPECT_EQ(env.store_host, StoreHost::kRankZero);
}

TEST(StoreLocation, TorchrunNamesWithoutLauncherMeanRankZeroServesAtMasterAddr) {
  const RankEnv env = read(with(kTorchrunNames, {{"ZEROTRAIN_STORE_TOKEN", "abc"}}));
  EXPECT_EQ(env.store_host, StoreHost::kRankZero);
  EXPECT_EQ(env.master_addr, "node0");
  EXPECT_EQ(env.master_port, 29500);
  // A host name may resolve differently on rank 0's host than elsewhere: every interface.
  EXPECT_EQ(env.store_bind_address, "0.0.0.0");
  EXPECT_EQ(env.store_token, "abc");
  EXPECT_EQ(
      read(with(kTorchrunNames, {{"MASTER_ADDR", "10.1.2.3"}, {"ZEROTRAIN_STORE_TOKEN", "x"}}))
          .store_bind_address,
      "10.1.2.3");
}

TEST(StoreLocation, TorchrunItselfIsRefusedNamingItsVariableAndTheLauncher) {
  for (const char* variable : {"TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT"}) {
    const std::string message = usage_error(with(kTorchrunNames, {{variable, "0"}}));
    EXPECT_NE(message.find(std::string("started by torchrun (") + variable), std::string::npos)
        << message;
    EXPECT_NE(message.find("zerotrain launch --nnodes"), std::string::npos) << message;
  }
  // `zerotrain launch` run under torchrun hands its ranks the marker: they are ours.
  const RankEnv env = read(with(
      kTorchrunNames, {{"TORCHELASTIC_RUN_ID", "x"}, {"ZEROTRAIN_LAUNCHER_HOSTS_STORE", "1"}}));
  EXPECT_EQ(env.store_host, StoreHost::kLauncher);
}

TEST(StoreLocation, NoTokenIsAllowedOnlyOnLoopback) {
  const RankEnv loopback = read(with(kTorchrunNames, {{"MASTER_ADDR", "127.0.0.1"}}));
  EXPECT_EQ(loopback.store_bind_address, "127.0.0.1");
  EXPECT_EQ(loopback.store_token, "");
  EXPECT_EQ(read(with(kTorchrunNames, {{"MASTER_ADDR", "localhost"}})).store_bind_address,
            "127.0.0.1");
  const std::string message = usage_error(kTorchrunNames);
  EXPECT_NE(message.find("ZEROTRAIN_STORE_TOKEN is not set"), std::string::npos) << message;
  EXPECT_NE(message.find("node0:29500"), std::string::npos) << message;
  EXPECT_NE(message.find("export ZEROTRAIN_STORE_TOKEN="), std::string::npos) << message;
}

TEST(StoreLocation, TorchrunNamesWithoutLauncherHaveNoDefaults) {
  std::string message = usage_error(without(kTorchrunNames, "MASTER_ADDR"));
  EXPECT_NE(message.find("MASTER_ADDR is not set"), std::string::npos) << message;
  message = usage_error(without(kTorchrunNames, "MASTER_PORT"));
  EXPECT_NE(message.find("MASTER_PORT is not set"), std::string::npos) << message;
}

TEST(StoreLocation, SlurmOnOneHostUsesLoopbackAndAPortEveryTaskDerivesAlike) {
  const RankEnv rank0 = read(slurm_one_host(0));
  const RankEnv rank1 = read(slurm_one_host(1));
  EXPECT_EQ(rank0.store_host, StoreHost::kRankZero);
  EXPECT_EQ(rank0.master_addr, "127.0.0.1");
  EXPECT_EQ(rank0.store_bind_address, "127.0.0.1");
  EXPECT_GE(rank0.master_port, 20000);
  EXPECT_LT(rank0.master_port, 32000);
  EXPECT_EQ(rank1.master_port, rank0.master_port);
  EXPECT_EQ(rank1.master_addr, rank0.master_addr);
  // No token exported: the job's identity, the same for both, stands in.
  EXPECT_FALSE(rank0.store_token.empty());
  EXPECT_EQ(rank1.store_token, rank0.store_token);
  EXPECT_NE(rank0.master_port_origin.find("SLURM_JOB_ID"), std::string::npos);
}

TEST(StoreLocation, AnotherSlurmJobOrStepGetsAnotherPortAndToken) {
  const RankEnv job = read(slurm_one_host(0));
  const RankEnv step = read(with(slurm_one_host(0), {{"SLURM_STEP_ID", "1"}}));
  const RankEnv other_job = read(with(slurm_one_host(0), {{"SLURM_JOB_ID", "418"}}));
  EXPECT_NE(step.master_port, job.master_port);
  EXPECT_NE(other_job.master_port, job.master_port);
  EXPECT_NE(step.store_token, job.store_token);
  EXPECT_NE(other_job.store_token, job.store_token);
}

TEST(StoreLocation, MasterAddrAndPortOverrideTheSlurmDefaults) {
  const RankEnv env =
      read(with(slurm_one_host(1), {{"MASTER_ADDR", "127.0.0.2"}, {"MASTER_PORT", "4242"}}));
  EXPECT_EQ(env.master_addr, "127.0.0.2");
  EXPECT_EQ(env.master_port, 4242);
  EXPECT_EQ(env.master_port_origin, "set by MASTER_PORT");
}

TEST(StoreLocation, SlurmOnSeveralHostsUsesTheFirstHostOfTheStep) {
  for (int rank = 0; rank < 4; ++rank) {
    const RankEnv env = read(slurm_two_hosts(rank));
    EXPECT_EQ(env.master_addr, "node3") << "rank " << rank;
    EXPECT_EQ(env.store_bind_address, "0.0.0.0");
    EXPECT_EQ(env.store_token, "secret");
    EXPECT_EQ(env.master_addr_origin, "the first host of SLURM_STEP_NODELIST");
  }
  // No step list (an older Slurm): the job's.
  EXPECT_EQ(read(without(slurm_two_hosts(1), "SLURM_STEP_NODELIST")).master_addr, "node1");
}

TEST(StoreLocation, SlurmOnSeveralHostsWithoutTokenIsRefused) {
  const std::string message = usage_error(without(slurm_two_hosts(2), "ZEROTRAIN_STORE_TOKEN"));
  EXPECT_NE(message.find("ZEROTRAIN_STORE_TOKEN is not set"), std::string::npos) << message;
  EXPECT_NE(message.find("the first host of SLURM_STEP_NODELIST"), std::string::npos) << message;
}

TEST(StoreLocation, SlurmRankZeroElsewhereThanTheFirstHostIsRefused) {
  const std::string message = usage_error(with(slurm_two_hosts(0), {{"SLURMD_NODENAME", "node4"}}));
  EXPECT_NE(message.find("rank 0 runs on node4, not on node3"), std::string::npos) << message;
  EXPECT_NE(message.find("MASTER_ADDR"), std::string::npos) << message;
}

TEST(StoreLocation, WithoutAJobIdMasterPortIsNeededNamingTheMissingId) {
  std::string message = usage_error(without(slurm_one_host(0), "SLURM_JOB_ID"));
  EXPECT_NE(message.find("MASTER_PORT is not set"), std::string::npos) << message;
  EXPECT_NE(message.find("nor is SLURM_JOB_ID"), std::string::npos) << message;
  message = usage_error(
      without(without(open_mpi_one_host(0), "OMPI_MCA_ess_base_jobid"), "PMIX_NAMESPACE"));
  EXPECT_NE(message.find("MASTER_PORT is not set"), std::string::npos) << message;
  EXPECT_NE(message.find("PMIX_NAMESPACE"), std::string::npos) << message;
}

TEST(StoreLocation, OpenMpiOnOneHostDerivesFromItsJobId) {
  const RankEnv rank0 = read(open_mpi_one_host(0));
  const RankEnv rank1 = read(open_mpi_one_host(1));
  EXPECT_EQ(rank0.master_addr, "127.0.0.1");
  EXPECT_EQ(rank1.master_port, rank0.master_port);
  EXPECT_EQ(rank1.store_token, rank0.store_token);
  EXPECT_FALSE(rank0.store_token.empty());
  const RankEnv other = read(with(open_mpi_one_host(0), {{"OMPI_MCA_ess_base_jobid", "12"}}));
  EXPECT_NE(other.master_port, rank0.master_port);
  // PMIx's namespace when the MCA variable is absent.
  EXPECT_EQ(read(without(open_mpi_one_host(1), "OMPI_MCA_ess_base_jobid")).master_port,
            read(without(open_mpi_one_host(0), "OMPI_MCA_ess_base_jobid")).master_port);
}

TEST(StoreLocation, OpenMpiOnSeveralHostsNeedsMasterAddrSayingHowToPassIt) {
  const std::string message =
      usage_error(with(open_mpi_one_host(0), {{"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}}));
  EXPECT_NE(message.find("MASTER_ADDR is not set"), std::string::npos) << message;
  EXPECT_NE(message.find("mpirun -x MASTER_ADDR"), std::string::npos) << message;
}

TEST(StoreLocation, LoopbackAddressesAreRecognisedAndOthersAreNot) {
  for (const char* address : {"localhost", "127.0.0.1", "127.1.2.3", "::1"}) {
    EXPECT_TRUE(is_loopback_address(address)) << address;
  }
  for (const char* address : {"0.0.0.0", "10.0.0.1", "node127", "::", "vm"}) {
    EXPECT_FALSE(is_loopback_address(address)) << address;
  }
}

TEST(StoreLocation, DescribeNamesAddressPortAndWhereEachCameFrom) {
  const std::string text = describe_store_location(read(slurm_two_hosts(1)));
  EXPECT_EQ(text.rfind("node3:", 0), 0u) << text;
  EXPECT_NE(text.find("SLURM_STEP_NODELIST"), std::string::npos) << text;
  EXPECT_NE(text.find("SLURM_JOB_ID"), std::string::npos) << text;
}

}  // namespace
}  // namespace zt::launch
