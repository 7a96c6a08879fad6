// CausalSelfAttention: multi-head self-attention in which position t attends to 0..t only
// (GPT-2): qkv projection, per-head softmax(q k^T / sqrt(hs)) v, output projection.
#pragma once

#include <cstdint>
#include <string>

#include "nn/layers/attention_core.h"
#include "nn/layers/linear.h"
#include "nn/module.h"

namespace zt::nn {

class CausalSelfAttention final : public Module {
 public:
  // Parameters "<name>.qkv.weight" (3C, C), "<name>.qkv.bias" (3C), "<name>.proj.weight"
  // (C, C), "<name>.proj.bias" (C). Weights are normal(0.02), except the output projection:
  // normal(proj_init_std), 0.02 / sqrt(2 * n_layer) in GPT-2 so the residual stream's
  // variance does not grow with depth. Biases are zeros. `dropout`: on the attention
  // probabilities in training (nanoGPT's attn_dropout).
  CausalSelfAttention(std::string name, std::int64_t channels, std::int64_t n_head,
                      float proj_init_std, AttentionDropout dropout = {});

  std::vector<ParameterSpec> parameter_specs() const override;
  // input (B, T, C) -> output (B, T, C)
  Tensor forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) override;
  Tensor backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                  ModuleContext& ctx) override;

 private:
  // forward when decoding: k and v through the KV cache, nothing saved
  Tensor forward_with_cache(ParameterViews params, const Tensor& input, ModuleContext& ctx);

  std::string name_;
  std::int64_t channels_;
  std::int64_t n_head_;
  float proj_init_std_;
  AttentionDropout dropout_;
  // The projections reuse Linear's GEMMs (and its saved input); the specs above are ours,
  // because GPT-2 initializes them differently from Linear.
  Linear qkv_;
  Linear proj_;
};

}  // namespace zt::nn
