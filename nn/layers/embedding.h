// Embedding: token + position embedding, out[b, t] = wte[ids[b, t]] + wpe[t] (GPT-2), or the
// token embedding alone, out[b, t] = wte[ids[b, t]] (Llama, whose positions are rotary).
#pragma once

#include <cstdint>

#include "nn/module.h"

namespace zt::nn {

enum class PositionEmbedding { kLearned, kNone };

class Embedding final : public Module {
 public:
  // Parameters "wte" (vocab_size, channels) and, with PositionEmbedding::kLearned, "wpe"
  // (max_seq_len, channels), normal(0.02). Sequences are at most max_seq_len tokens either way.
  Embedding(std::int64_t vocab_size, std::int64_t max_seq_len, std::int64_t channels,
            PositionEmbedding positions = PositionEmbedding::kLearned);

  std::vector<ParameterSpec> parameter_specs() const override;
  // input: token ids (B, T), DType::kI32, T <= max_seq_len; returns (B, T, C) in the
  // parameters' dtype (the compute dtype; both parameters must share it). An id
  // outside [0, vocab_size) comes from user data and throws zt::FormatError.
  Tensor forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) override;
  // Token ids (B, T) i32 in host memory (others are not looked at): throws FormatError naming the
  // batch row and position of the first id outside [0, vocab_size).
  void check_input(const Tensor& input) const override;
  // Scatter-adds into wte (and wpe); returns an undefined Tensor (ids have no gradient).
  Tensor backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                  ModuleContext& ctx) override;

 private:
  std::int64_t vocab_size_;
  std::int64_t max_seq_len_;
  std::int64_t channels_;
  PositionEmbedding positions_;
};

}  // namespace zt::nn
