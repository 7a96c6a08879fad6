// The checkpoint format's pieces: state runs of padded layouts, the manifest's round trip and
// its refusals, and the save-phase fault plans.
#include "runtime/checkpoint/checkpoint_format.h"

#include <gtest/gtest.h>

#include "core/config/config_loader.h"
#include "core/error.h"
#include "core/memory_tracker.h"
#include "runtime/engine/fault_injection.h"
#include "runtime/engine/model_factory.h"
#include "sharding/shard_plan.h"

namespace zt {
namespace {

Config tiny_gpt() {
  return parse_config_text(
      "", "t.toml",
      {"model.type=gpt", "model.n_layer=2", "model.d_model=16", "model.n_head=2",
       "model.vocab_size=16", "model.seq_len=8", "model.tie_embeddings=true"});
}

// Every world size's shard runs partition the model's elements exactly once.
TEST(StateRuns, EveryWorldsShardsPartitionTheModel) {
  const nn::Model model = engine::make_model(tiny_gpt());
  for (const int world : {1, 2, 3, 4, 7}) {
    const zero::FlatLayout layout =
        zero::make_flat_layout(model, world, zero::BlockPadding::kEachBlock);
    std::vector<int> covered(static_cast<std::size_t>(layout.numel), 0);
    for (int rank = 0; rank < world; ++rank) {
      const zero::ShardPlan plan(layout, world, rank, 100);
      std::vector<zero::StateRun> runs;
      for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
        for (const zero::Segment& segment : plan.segments(b)) {
          zero::append_state_runs(layout, plan.slice_offset(segment, rank),
                                  plan.slice_numel(segment), segment.shard_offset, runs);
        }
      }
      for (const zero::StateRun& run : runs) {
        ASSERT_LE(run.shard_offset + run.count, plan.shard_numel());
        for (std::int64_t i = 0; i < run.count; ++i)
          ++covered[static_cast<std::size_t>(run.begin + i)];
      }
    }
    EXPECT_EQ(std::count(covered.begin(), covered.end(), 1), layout.numel) << "world " << world;
  }
}

// Note [Why parameters are aligned]: a GPT of odd widths has gaps between its parameters in
// memory, yet its manifest offsets and state runs are the unpadded order that packed layouts
// (and so every checkpoint saved before the alignment) used: each parameter's elements back
// to back, in model order.
TEST(StateRuns, AlignedParametersKeepTheUnpaddedOrderOfCheckpoints) {
  const nn::Model model = engine::make_model(
      parse_config_text("", "odd.toml",
                        {"model.type=gpt", "model.n_layer=2", "model.d_model=36", "model.n_head=4",
                         "model.vocab_size=37", "model.seq_len=5", "model.tie_embeddings=true"}));
  for (const auto padding : {zero::BlockPadding::kWholeBuffer, zero::BlockPadding::kEachBlock}) {
    const zero::FlatLayout layout = zero::make_flat_layout(model, 3, padding);
    const std::vector<checkpoint::ManifestParameter> described =
        checkpoint::describe_parameters(layout);
    std::vector<std::int64_t> flat_of(static_cast<std::size_t>(layout.numel), -1);
    std::int64_t packed = 0;  // the offset a packed layout gives the next parameter
    std::size_t index = 0;
    bool gaps = false;
    for (const zero::BlockSlots& block : layout.blocks) {
      for (const zero::ParameterSlot& slot : block.parameters) {
        const checkpoint::ManifestParameter& p = described.at(index++);
        if (slot.tied_to_block) continue;
        EXPECT_EQ(p.offset, packed) << p.name;
        gaps = gaps || slot.offset != packed;
        for (std::int64_t i = 0; i < slot.spec.shape.numel(); ++i) {
          flat_of[static_cast<std::size_t>(packed + i)] = slot.offset + i;
        }
        packed += slot.spec.shape.numel();
      }
    }
    EXPECT_TRUE(gaps) << "the odd widths should leave gaps in memory";
    EXPECT_EQ(packed, layout.numel);
    std::vector<zero::StateRun> runs;
    zero::append_state_runs(layout, 0, layout.padded_numel, 0, runs);
    std::int64_t covered = 0;
    for (const zero::StateRun& run : runs) {
      for (std::int64_t i = 0; i < run.count; ++i) {
        ASSERT_EQ(flat_of[static_cast<std::size_t>(run.begin + i)], run.shard_offset + i);
      }
      covered += run.count;
    }
    EXPECT_EQ(covered, layout.numel);
  }
}

TEST(Manifest, RoundTripsAndDescribesTiesOnce) {
  const zero::FlatLayout layout = zero::make_flat_layout(engine::make_model(tiny_gpt()), 2);
  checkpoint::Manifest m;
  m.trainer = {7, 6, 512.0, 3};
  m.world_size = 2;
  m.zero_stage = 3;
  m.precision = "fp16";
  m.optimizer = "adamw";
  m.offload = "cpu";
  m.state_names = checkpoint::state_names("adamw", 2);
  m.numel = layout.numel;
  m.global_batch_size = 8;
  m.seed = 42;
  m.parameters = checkpoint::describe_parameters(layout);
  m.files = {{checkpoint::rank_file_name(0, 2), 0, 100, 0xdeadbeef},
             {checkpoint::rank_file_name(1, 2), 1, 200, 0x1}};
  m.config_toml = "[run]\nseed = 42\n";
  const checkpoint::Manifest back =
      checkpoint::parse_manifest(checkpoint::manifest_to_toml(m), "m.toml");
  EXPECT_EQ(back.trainer.step, 7);
  EXPECT_EQ(back.trainer.applied_steps, 6);
  EXPECT_EQ(back.trainer.loss_scale, 512.0);
  EXPECT_EQ(back.trainer.loss_scale_clean_steps, 3);
  EXPECT_EQ(back.parameters, m.parameters);
  EXPECT_EQ(back.state_names, (std::vector<std::string>{"master", "exp_avg", "exp_avg_sq"}));
  EXPECT_EQ(back.files[0].crc32c, 0xdeadbeefu);
  EXPECT_EQ(back.config_toml, m.config_toml);
  const auto tied = std::find_if(m.parameters.begin(), m.parameters.end(),
                                 [](const auto& p) { return !p.tied_to.empty(); });
  ASSERT_NE(tied, m.parameters.end());
  EXPECT_EQ(tied->name, "head.lm_head.weight");
  EXPECT_EQ(tied->tied_to, "embedding.wte");
  EXPECT_EQ(tied->offset, 0);
}

TEST(Manifest, RefusesDamageNamingTheFileAndKey) {
  const auto error_of = [](const std::string& text) {
    try {
      checkpoint::parse_manifest(text, "ck/manifest.toml");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of("format = [").find("'ck/manifest.toml' is not valid TOML"), std::string::npos);
  EXPECT_NE(error_of("format = \"zerotrain-checkpoint/9\"").find("key 'format'"),
            std::string::npos);
  EXPECT_NE(error_of("format = \"zerotrain-checkpoint/1\"\nstep = 1\n")
                .find("key 'applied_steps' is missing"),
            std::string::npos);
  // A file entry that names a path outside the checkpoint is refused.
  checkpoint::Manifest m;
  m.state_names = {"master"};
  m.files = {{"../../etc/passwd", 0, 1, 0}};
  const std::string text = checkpoint::manifest_to_toml(m);
  EXPECT_NE(error_of(text).find("key 'files[0].name'"), std::string::npos) << error_of(text);
}

TEST(FaultPlan, NamesASavePhaseAndAnAttempt) {
  const engine::FaultPlan plan =
      engine::parse_fault_plan("rank=1,step=4,signal=9,at=save-writing,attempt=-1");
  EXPECT_EQ(plan.at, "save-writing");
  EXPECT_EQ(plan.attempt, -1);
  EXPECT_THROW(engine::parse_fault_plan("rank=1,step=4,signal=9,at=lunch"), UsageError);
}

TEST(FaultPlan, ASleepInBackwardIsAnActionOfItsOwn) {
  const engine::FaultPlan plan = engine::parse_fault_plan("rank=1,step=3,sleep=30,at=backward");
  EXPECT_EQ(plan.sleep_s, 30);
  EXPECT_EQ(plan.at, "backward");
  EXPECT_EQ(plan.signal, 0);
  EXPECT_THROW(engine::parse_fault_plan("rank=1,step=3,sleep=0"), UsageError);
}

TEST(FaultPlan, SkippingACollectiveIsAnActionNamingItsKind) {
  const engine::FaultPlan plan = engine::parse_fault_plan("rank=1,step=3,skip=all_gather");
  EXPECT_EQ(plan.skip, "all_gather");
  EXPECT_EQ(plan.signal, 0);
  EXPECT_EQ(plan.sleep_s, 0);
  try {
    engine::parse_fault_plan("rank=1,step=3,skip=gather");
    ADD_FAILURE() << "skip=gather was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("skip=gather is not a collective"), std::string::npos)
        << e.what();
  }
  // Only the rank it names, and not the trainer's to carry out.
  MemoryTracker tracker(Device::cpu());
  EXPECT_NE(engine::op_skip_fault_for(plan, 1, &tracker), nullptr);
  EXPECT_EQ(engine::op_skip_fault_for(plan, 0, &tracker), nullptr);
  EXPECT_EQ(
      engine::op_skip_fault_for(engine::parse_fault_plan("rank=1,step=3,exit=2"), 1, &tracker),
      nullptr);
  engine::maybe_inject_fault(plan, 1, 3);  // returns: the communicator drops the op
}

}  // namespace
}  // namespace zt
