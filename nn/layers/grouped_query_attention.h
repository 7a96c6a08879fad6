// GroupedQueryAttention: Llama's causal self-attention. A fused qkv projection without bias
// gives n_head query heads and n_kv_head key/value heads (grouped-query attention: each kv
// head serves n_head / n_kv_head query heads), rotary position embeddings turn q and k, and an
// output projection without bias maps the heads back to the residual stream.
#pragma once

#include <cstdint>
#include <string>

#include "nn/layers/attention_core.h"
#include "nn/layers/linear.h"
#include "nn/layers/rope.h"
#include "nn/module.h"

namespace zt::nn {

struct GroupedQueryAttentionShape {
  std::int64_t channels = 0;   // C = n_head * head_dim
  std::int64_t n_head = 0;     // query heads
  std::int64_t n_kv_head = 0;  // key/value heads, dividing n_head
  float rope_theta = 10000.0f;
};

class GroupedQueryAttention final : public Module {
 public:
  // Parameters "<name>.qkv.weight" ((n_head + 2 n_kv_head) head_dim, C): Hugging Face's
  // q_proj, k_proj and v_proj rows in that order, normal(0.02); "<name>.proj.weight" (C, C),
  // normal(proj_init_std). head_dim = C / n_head must be even (rotary pairs). `dropout`: on
  // the attention probabilities in training.
  GroupedQueryAttention(std::string name, const GroupedQueryAttentionShape& shape,
                        float proj_init_std, AttentionDropout dropout = {});

  std::vector<ParameterSpec> parameter_specs() const override;
  // input (B, T, C) -> output (B, T, C)
  Tensor forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) override;
  Tensor backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                  ModuleContext& ctx) override;

 private:
  // forward when decoding: q and k rotated at absolute positions, k and v through the KV
  // cache, nothing saved
  Tensor forward_with_cache(ParameterViews params, const Tensor& input, ModuleContext& ctx);
  std::int64_t qkv_width() const { return (n_head_ + 2 * n_kv_head_) * head_dim_; }

  std::string name_;
  std::int64_t channels_;
  std::int64_t n_head_;
  std::int64_t n_kv_head_;
  std::int64_t head_dim_;
  float proj_init_std_;
  AttentionDropout dropout_;
  Rope rope_;
  Linear qkv_;
  Linear proj_;
};

}  // namespace zt::nn
