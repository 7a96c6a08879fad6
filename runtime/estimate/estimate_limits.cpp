// The estimator's refusals, in closed form from the config and the model's layout.
#include "runtime/estimate/estimate_limits.h"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>

#include "core/config/byte_size.h"
#include "core/error.h"
#include "nn/models/llama.h"
#include "sharding/flat_layout.h"
#include "sharding/shard_plan.h"

namespace zt::estimate {
namespace {

// The product of `factors` as bytes of f32 (x 4), or nothing when it overflows int64.
std::optional<std::int64_t> f32_bytes(std::initializer_list<std::int64_t> factors) {
  std::int64_t product = 4;
  for (const std::int64_t factor : factors) {
    if (__builtin_mul_overflow(product, factor, &product)) return std::nullopt;
  }
  return product;
}

// The SwiGLU width a Llama model.* builds (its default when ffn_dim is 0); 0 for the others.
std::int64_t llama_ffn_dim(const ModelConfig& m) {
  if (m.type != ModelType::kLlama) return 0;
  return m.ffn_dim != 0 ? m.ffn_dim : nn::llama_default_ffn_dim(m.d_model);
}

// The largest tensors one micro-batch makes: GPT's and Llama's (B, T, max(4C, 2F, V)) and the
// scores of every attention head, (B, H, T, T) (the CUDA backend's workspace); the MLP's (B,
// max(input, hidden, classes)).
void check_activation_shapes(const Config& config, std::int64_t micro_batch_size) {
  const ModelConfig& m = config.model;
  const bool fits =
      is_language_model(m.type)
          ? f32_bytes({micro_batch_size, m.seq_len,
                       std::max({4 * m.d_model, 2 * llama_ffn_dim(m), m.vocab_size})}) &&
                f32_bytes({micro_batch_size, m.n_head, m.seq_len, m.seq_len})
          : f32_bytes({micro_batch_size, std::max({m.input_dim, m.hidden_dim, m.num_classes})})
                .has_value();
  if (fits) return;
  const std::string key =
      config.train.micro_batch_size != 0 ? "train.micro_batch_size" : "train.global_batch_size";
  throw ConfigError(where_set(config, key) + ": " + key + ": a micro-batch of " +
                    std::to_string(micro_batch_size) +
                    " samples makes activations of more bytes than int64 counts; use a "
                    "smaller batch");
}

void check_segment_count(const Config& config, const nn::Model& model, int world_size) {
  const std::int64_t bucket_bytes = config.zero.reduce_bucket_size_bytes;
  const zero::FlatLayout layout =
      zero::make_flat_layout(model, world_size, zero::BlockPadding::kEachBlock);
  const zero::ShardPlan plan(layout, world_size, 0, bucket_bytes / 4);
  if (plan.segment_count() <= kMaxSegmentsPerPass) return;
  // Each block's last segment may be short: leave one per block out of the budget.
  const auto blocks = static_cast<std::int64_t>(layout.blocks.size());
  const std::int64_t least_elements = layout.padded_numel / (kMaxSegmentsPerPass - blocks) + 1;
  const std::int64_t mib = std::int64_t{1} << 20;
  const std::int64_t least_bytes = (least_elements * 4 + mib - 1) / mib * mib;
  throw ConfigError(where_set(config, "zero.reduce_bucket_size") +
                    ": zero.reduce_bucket_size: " + format_byte_size(bucket_bytes) +
                    " cuts this model (" + std::to_string(layout.numel) + " parameters) into " +
                    std::to_string(plan.segment_count()) + " collectives per pass at world " +
                    std::to_string(world_size) + "; the estimate runs each one and walks at most " +
                    std::to_string(kMaxSegmentsPerPass) + ": set it to at least " +
                    format_byte_size(least_bytes));
}

}  // namespace

void check_estimable(const Config& config, const nn::Model& model, int world_size,
                     std::int64_t micro_batch_size) {
  check_activation_shapes(config, micro_batch_size);
  check_segment_count(config, model, world_size);
}

}  // namespace zt::estimate
