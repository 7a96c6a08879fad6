// The Llama-style decoder: block "embedding" (token embedding only: positions are rotary),
// blocks "block.0".. (pre-norm RMSNorm blocks with grouped-query attention and a SwiGLU MLP),
// block "head" (final RMSNorm + Linear to vocabulary logits). No biases anywhere.
#pragma once

#include <cstdint>

#include "nn/model.h"

namespace zt::nn {

struct LlamaShape {
  std::int64_t n_layer = 0;
  std::int64_t n_head = 0;
  std::int64_t n_kv_head = 0;  // key/value heads, dividing n_head (grouped-query attention)
  std::int64_t d_model = 0;
  std::int64_t ffn_dim = 0;  // the SwiGLU MLP's hidden width F
  std::int64_t vocab_size = 0;
  std::int64_t seq_len = 0;  // the longest sequence
  float rope_theta = 10000.0f;
  float norm_eps = 1e-5f;
  bool tie_embeddings = false;
  float dropout = 0.0f;  // as GptShape's
};

// Llama's MLP width when none is given: 8/3 d_model (the SwiGLU's three matrices then hold
// what GPT's two 4 d_model ones do), rounded up to a multiple of 256 (Llama 2 7B: 11008).
std::int64_t llama_default_ffn_dim(std::int64_t d_model);

// Throws zt::ConfigError naming the model.* key for a shape that cannot be built (n_kv_head
// not dividing n_head, d_model not divisible by n_head, an odd head_dim, non-positive sizes,
// a non-positive rope_theta or norm_eps). With tie_embeddings the head's lm_head.weight is
// the embedding's wte.
Model make_llama(const LlamaShape& shape);

// Parameters of make_llama(shape), in closed form, with hd = C / n_head:
//   V C + L (2 C + (n_head + 2 n_kv_head) hd C + C^2 + 3 C F) + C + (tied ? 0 : V C).
std::int64_t llama_parameter_count(const LlamaShape& shape);

}  // namespace zt::nn
