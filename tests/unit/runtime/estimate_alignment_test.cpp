// The estimate counts the padding that aligns each parameter (Note [Why parameters are
// aligned] in sharding/flat_layout.h) without being told: it replays the strategies'
// allocations, which are sized by the flat layout.
#include <gtest/gtest.h>

#include "core/config/config_loader.h"
#include "runtime/engine/model_factory.h"
#include "runtime/estimate/memory_estimator.h"
#include "sharding/flat_layout.h"

namespace zt::estimate {
namespace {

TEST(EstimateAlignment, ParameterBytesIncludeTheAlignmentPaddingOfOddWidths) {
  const Config config =
      parse_config_text("", "odd.toml",
                        {"model.type=gpt", "model.n_layer=2", "model.n_head=4", "model.d_model=36",
                         "model.vocab_size=50257", "model.seq_len=16", "train.micro_batch_size=1",
                         "train.grad_accum_steps=1"});
  const zero::FlatLayout layout = zero::make_flat_layout(engine::make_model(config), 1);
  // More padding than the shards' (under kShardAlignElements at one rank): the alignment's.
  ASSERT_GT(layout.padded_numel - layout.numel, zero::kShardAlignElements);
  const RankEstimate e = estimate_rank(config, 1, 0);
  EXPECT_EQ(e.parameters, layout.numel);
  // f32 on one rank (DDP): the parameters are the master weights, one padded f32 buffer.
  EXPECT_EQ(e.memory.peak_bytes[static_cast<std::size_t>(MemoryCategory::kParameters)],
            4 * layout.padded_numel);
}

}  // namespace
}  // namespace zt::estimate
