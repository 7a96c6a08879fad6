// read_rank_env over a fake environment: torchrun's, Open MPI's and Slurm's variables,
// their precedence, and garbage or inconsistent values named in the error.
#include "runtime/launch/rank_env.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/error.h"

namespace zt::launch {
namespace {

using Env = std::map<std::string, std::string>;

std::optional<RankEnv> read(const Env& env) {
  return read_rank_env([&](const std::string& name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

// The message of the UsageError read(env) throws; fails the test when it throws none.
std::string usage_error(const Env& env) {
  try {
    read(env);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UsageError";
  return "";
}

const Env kTorchrun{{"RANK", "5"},
                    {"LOCAL_RANK", "1"},
                    {"WORLD_SIZE", "8"},
                    {"LOCAL_WORLD_SIZE", "4"},
                    {"MASTER_ADDR", "node0"},
                    {"MASTER_PORT", "29500"},
                    {"ZEROTRAIN_STORE_TOKEN", "abc123"}};

TEST(RankEnv, NothingSetIsASingleRankRun) {
  EXPECT_FALSE(read({}).has_value());
  EXPECT_FALSE(read({{"SLURM_JOB_ID", "17"}, {"MASTER_PORT", "1234"}}).has_value());
}

TEST(RankEnv, ReadsTorchrunsVariables) {
  const std::optional<RankEnv> env = read(kTorchrun);
  ASSERT_TRUE(env.has_value());
  EXPECT_EQ(env->rank, 5);
  EXPECT_EQ(env->local_rank, 1);
  EXPECT_EQ(env->world_size, 8);
  EXPECT_EQ(env->local_world_size, 4);
  EXPECT_EQ(env->master_addr, "node0");
  EXPECT_EQ(env->master_port, 29500);
  EXPECT_EQ(env->store_token, "abc123");
  EXPECT_EQ(env->source, "torchrun");
}

TEST(RankEnv, TorchrunWinsOverSlurmAndOpenMpi) {
  Env env = kTorchrun;
  env.insert({{"SLURM_PROCID", "0"},
              {"SLURM_LOCALID", "0"},
              {"SLURM_NTASKS", "2"},
              {"OMPI_COMM_WORLD_RANK", "1"}});
  EXPECT_EQ(read(env)->rank, 5);
  EXPECT_EQ(read(env)->source, "torchrun");
}

TEST(RankEnv, ReadsOpenMpisVariablesBeforeAnInheritedSlurmProcid) {
  const Env env{{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                {"SLURM_PROCID", "0"},         {"SLURM_LOCALID", "0"},
                {"SLURM_NTASKS", "1"},         {"SLURM_TASKS_PER_NODE", "1"},
                {"MASTER_ADDR", "10.0.0.1"},   {"MASTER_PORT", "6000"},
                {"ZEROTRAIN_STORE_TOKEN", "t"}};
  const std::optional<RankEnv> rank = read(env);
  ASSERT_TRUE(rank.has_value());
  EXPECT_EQ(rank->source, "Open MPI");
  EXPECT_EQ(rank->rank, 3);
  EXPECT_EQ(rank->local_rank, 1);
  EXPECT_EQ(rank->world_size, 4);
  EXPECT_EQ(rank->local_world_size, 2);
  EXPECT_EQ(rank->master_port, 6000);
  EXPECT_EQ(rank->store_bind_address, "10.0.0.1");
  EXPECT_EQ(rank->store_token, "t");
}

TEST(RankEnv, ReadsSlurmsVariablesWithTheFirstTasksPerNodeCount) {
  Env env{{"SLURM_STEP_ID", "0"},
          {"SLURM_PROCID", "6"},
          {"SLURM_LOCALID", "2"},
          {"SLURM_NTASKS", "7"},
          {"SLURM_TASKS_PER_NODE", "4(x1),3"},
          {"MASTER_ADDR", "n1"},
          {"MASTER_PORT", "29400"},
          {"ZEROTRAIN_STORE_TOKEN", "t"}};
  std::optional<RankEnv> rank = read(env);
  ASSERT_TRUE(rank.has_value());
  EXPECT_EQ(rank->source, "Slurm");
  EXPECT_EQ(rank->rank, 6);
  EXPECT_EQ(rank->local_rank, 2);
  EXPECT_EQ(rank->world_size, 7);
  EXPECT_EQ(rank->local_world_size, 4);
  env["SLURM_NTASKS_PER_NODE"] = "3";  // takes precedence over SLURM_TASKS_PER_NODE
  EXPECT_EQ(read(env)->local_world_size, 3);
}

TEST(RankEnv, NodeIndexComesFromGroupRankNodeRankOrSlurmNodeid) {
  EXPECT_FALSE(read(kTorchrun)->node_rank.has_value());  // torchrun without GROUP_RANK
  Env torchrun = kTorchrun;
  torchrun["NODE_RANK"] = "1";
  EXPECT_EQ(read(torchrun)->node_rank, 1);
  torchrun["GROUP_RANK"] = "0";  // torchrun's own name comes first
  EXPECT_EQ(read(torchrun)->node_rank, 0);
  torchrun["GROUP_RANK"] = "8";
  EXPECT_NE(usage_error(torchrun).find("GROUP_RANK='8'"), std::string::npos);

  const Env slurm{{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "5"},    {"SLURM_LOCALID", "1"},
                  {"SLURM_NTASKS", "8"},  {"SLURM_NODEID", "2"},    {"SLURM_NTASKS_PER_NODE", "2"},
                  {"MASTER_ADDR", "n1"},  {"MASTER_PORT", "29400"}, {"ZEROTRAIN_STORE_TOKEN", "t"}};
  EXPECT_EQ(read(slurm)->node_rank, 2);
}

TEST(RankEnv, OpenMpiGivesNoNodeIndexEvenWithItsNodeRank) {
  // OMPI_COMM_WORLD_NODE_RANK is the process's rank on its node, counted across jobs.
  const Env env{{"OMPI_COMM_WORLD_RANK", "3"},
                {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                {"OMPI_COMM_WORLD_SIZE", "4"},
                {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                {"OMPI_COMM_WORLD_NODE_RANK", "1"},
                {"MASTER_ADDR", "10.0.0.1"},
                {"MASTER_PORT", "6000"},
                {"ZEROTRAIN_STORE_TOKEN", "t"}};
  const std::optional<RankEnv> rank = read(env);
  ASSERT_TRUE(rank.has_value());
  EXPECT_FALSE(rank->node_rank.has_value());
  EXPECT_EQ(rank->local_rank, 1);
}

TEST(RankEnv, SlurmOnSeveralHostsWithoutMasterAddrOrNodelistNamesTheVariables) {
  const Env env{{"SLURM_PROCID", "0"},
                {"SLURM_STEP_ID", "0"},
                {"SLURM_LOCALID", "0"},
                {"SLURM_NTASKS", "4"},
                {"SLURM_TASKS_PER_NODE", "2(x2)"},
                {"MASTER_PORT", "29400"}};
  const std::string message = usage_error(env);
  EXPECT_NE(message.find("MASTER_ADDR is not set"), std::string::npos) << message;
  EXPECT_NE(message.find("SLURM_STEP_NODELIST"), std::string::npos) << message;
  EXPECT_NE(message.find("Slurm"), std::string::npos) << message;
}

TEST(RankEnv, SeveralRanksWithoutMasterPortNamesTheVariable) {
  Env env = kTorchrun;
  env.erase("MASTER_PORT");
  const std::string message = usage_error(env);
  EXPECT_NE(message.find("MASTER_PORT is not set"), std::string::npos) << message;
}

TEST(RankEnv, OneRankNeedsNoMaster) {
  const std::optional<RankEnv> env =
      read({{"RANK", "0"}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "1"}, {"LOCAL_WORLD_SIZE", "1"}});
  ASSERT_TRUE(env.has_value());
  EXPECT_EQ(env->master_addr, "127.0.0.1");
  EXPECT_EQ(env->master_port, 0);
}

TEST(RankEnv, GarbageValuesNameTheVariableAndTheValue) {
  const std::pair<const char*, const char*> garbage[] = {
      {"RANK", "abc"},         {"RANK", "-1"},
      {"RANK", "5x"},          {"RANK", ""},
      {"WORLD_SIZE", "0"},     {"LOCAL_RANK", "1.5"},
      {"MASTER_PORT", "0"},    {"MASTER_PORT", "65536"},
      {"MASTER_PORT", "http"}, {"WORLD_SIZE", "99999999999"}};
  for (const auto& [name, value] : garbage) {
    Env env = kTorchrun;
    env[name] = value;
    const std::string message = usage_error(env);
    EXPECT_NE(message.find(std::string(name) + "='" + value + "'"), std::string::npos)
        << name << "=" << value << ": " << message;
  }
}

TEST(RankEnv, InconsistentValuesNameBothVariables) {
  Env env = kTorchrun;
  env["RANK"] = "8";
  std::string message = usage_error(env);
  EXPECT_NE(message.find("RANK=8 is not below WORLD_SIZE=8"), std::string::npos) << message;
  env = kTorchrun;
  env["LOCAL_RANK"] = "4";
  message = usage_error(env);
  EXPECT_NE(message.find("LOCAL_RANK=4 is not below LOCAL_WORLD_SIZE=4"), std::string::npos)
      << message;
  env = kTorchrun;
  env["LOCAL_WORLD_SIZE"] = "16";
  message = usage_error(env);
  EXPECT_NE(message.find("LOCAL_WORLD_SIZE=16 exceeds WORLD_SIZE=8"), std::string::npos) << message;
}

TEST(RankEnv, PartialTorchrunVariablesNameTheMissingOne) {
  Env env = kTorchrun;
  env.erase("LOCAL_WORLD_SIZE");
  const std::string message = usage_error(env);
  EXPECT_NE(message.find("LOCAL_WORLD_SIZE is not set"), std::string::npos) << message;
}

TEST(RankEnv, SlurmsBatchScriptIsNotTakenForRankZeroOfTheJob) {
  Env env{{"SLURM_PROCID", "0"},
          {"SLURM_LOCALID", "0"},
          {"SLURM_NTASKS", "2"},
          {"SLURM_TASKS_PER_NODE", "2"},
          {"SLURM_JOB_ID", "7"}};
  const std::string message = usage_error(env);
  EXPECT_NE(message.find("Slurm's batch script"), std::string::npos) << message;
  EXPECT_NE(message.find("srun zerotrain train"), std::string::npos) << message;
  // A task of srun has a step id; a job of one task may train in its batch script.
  env["SLURM_STEP_ID"] = "0";
  EXPECT_EQ(read(env)->world_size, 2);
  EXPECT_EQ(read({{"SLURM_PROCID", "0"},
                  {"SLURM_LOCALID", "0"},
                  {"SLURM_NTASKS", "1"},
                  {"SLURM_TASKS_PER_NODE", "1"}})
                ->world_size,
            1);
}

TEST(RankEnv, MalformedSlurmTasksPerNodeIsNamed) {
  const Env env{{"SLURM_PROCID", "0"}, {"SLURM_LOCALID", "0"},
                {"SLURM_NTASKS", "2"}, {"SLURM_TASKS_PER_NODE", "(x2)"},
                {"MASTER_ADDR", "a"},  {"MASTER_PORT", "1"}};
  const std::string message = usage_error(env);
  EXPECT_NE(message.find("SLURM_TASKS_PER_NODE='(x2)'"), std::string::npos) << message;
}

}  // namespace
}  // namespace zt::launch
