// A trainer fed by its caller (the library's step(batch)) and evaluated between steps, at
// world 2 on every ZeRO stage: feeding the batches run() would load gives run()'s losses bit
// for bit, and evaluation changes nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "data/distributed_sampler.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "runtime/engine/model_factory.h"
#include "runtime/engine/trainer.h"

namespace zt {
namespace {

constexpr int kWorld = 2;
constexpr int kSteps = 6;

Config gpt_config(int stage, std::int64_t accum) {
  return parse_config_text(
      "", "user_parts_test.toml",
      {"model.type=gpt", "model.n_layer=2", "model.n_head=2", "model.d_model=16",
       "model.vocab_size=16", "model.seq_len=8", "optimizer.lr=0.01",
       "zero.reduce_bucket_size=1KiB", "train.steps=" + std::to_string(kSteps),
       "zero.stage=" + std::to_string(stage), "train.grad_accum_steps=" + std::to_string(accum),
       "train.micro_batch_size=" + std::to_string(8 / (accum * kWorld))});
}

// `parts` one after another along the first axis (host memory).
Tensor concatenated(const std::vector<Tensor>& parts, MemoryTracker& tracker) {
  Shape shape = parts.front().shape();
  std::int64_t rows = 0;
  for (const Tensor& part : parts) rows += part.dim(0);
  shape = shape.with_extent(0, rows);
  Tensor all = Tensor::empty(shape, parts.front().dtype(), tracker, MemoryCategory::kActivations);
  auto* out = static_cast<char*>(all.data());
  for (const Tensor& part : parts) {
    std::memcpy(out, part.data(), part.nbytes());
    out += part.nbytes();
  }
  return all;
}

enum class Feed { kRun, kStep, kStepEvaluating };

std::vector<double> train(const Config& config, Feed feed) {
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  std::vector<double> losses;
  testing::run_ranks(kWorld, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    auto comm = comm::create_cpu_communicator(store, rank, kWorld);
    engine::Trainer trainer(config, *comm, tracker, engine::quiet_trainer_options());
    std::vector<double> mine;
    if (feed == Feed::kRun) {
      mine = trainer.run().losses;
    } else {
      const auto source = engine::make_batch_source(config);
      const Config& resolved = trainer.config();
      const data::DistributedSampler sampler(resolved.train.micro_batch_size,
                                             resolved.train.grad_accum_steps, kWorld, rank);
      const data::Batch held_out = source->load({1000, 4}, tracker);
      double evaluated = 0;
      for (std::int64_t step = 1; step <= kSteps; ++step) {
        std::vector<Tensor> inputs;
        std::vector<Tensor> targets;
        for (std::int64_t micro = 0; micro < resolved.train.grad_accum_steps; ++micro) {
          const data::Batch part = source->load(sampler.micro_batch(step - 1, micro), tracker);
          inputs.push_back(part.inputs);
          targets.push_back(part.targets);
        }
        data::Batch batch{concatenated(inputs, tracker), concatenated(targets, tracker),
                          resolved.train.micro_batch_size * resolved.train.grad_accum_steps};
        if (feed == Feed::kStepEvaluating) {
          evaluated = trainer.evaluate(held_out);
          EXPECT_TRUE(std::isfinite(evaluated));
        }
        mine.push_back(trainer.step(batch).loss);
        if (feed == Feed::kStepEvaluating) {
          EXPECT_NE(trainer.evaluate(held_out), evaluated);
        }
      }
    }
    if (rank == 0) losses = mine;
    comm->barrier()->wait();
  });
  return losses;
}

class UserFedTrainer : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(UserFedTrainer, StepOnRunsBatchesGivesRunsLossesAndEvaluationChangesNothing) {
  const auto [stage, accum] = GetParam();
  const Config config = gpt_config(stage, accum);
  const std::vector<double> expected = train(config, Feed::kRun);
  ASSERT_EQ(expected.size(), static_cast<std::size_t>(kSteps));
  EXPECT_EQ(train(config, Feed::kStep), expected);
  EXPECT_EQ(train(config, Feed::kStepEvaluating), expected);
}

INSTANTIATE_TEST_SUITE_P(StagesAccumulation, UserFedTrainer,
                         ::testing::Combine(::testing::Values(0, 1, 2, 3), ::testing::Values(1, 2)),
                         [](const auto& param_info) {
                           return "Stage" + std::to_string(std::get<0>(param_info.param)) +
                                  "Accum" + std::to_string(std::get<1>(param_info.param));
                         });

}  // namespace
}  // namespace zt
