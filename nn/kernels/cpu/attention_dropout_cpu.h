// Dropout on the probability blocks of CPU attention's tiles (Note [Attention dropout] in
// nn/kernels/math/attention_dropout_math.h): scalar loops over the shared mask arithmetic, so
// the CPU keeps the elements CUDA keeps.
#pragma once

#include <cstdint>

#include "nn/kernels/cpu/attention_rows_cpu.h"
#include "nn/kernels/math/attention_dropout_math.h"

namespace zt::nn::cpu {

// The forward, in place: the probabilities p (a block of rows of query first_query on, keys
// first_key on) -> P ∘ Z over each row's visible keys (the masked ones are 0 either way).
void attention_dropout_rows(const math::AttentionDropoutHead& mask, std::int64_t first_query,
                            std::int64_t first_key, const ScoreBlock& p);

// The backward, in place over the (rows, n) blocks p and dp of row stride ld (query
// first_query on, keys first_key on): dp holds dPd = dO V^T and becomes dS = P ∘ (Z dPd - D);
// p holds P and becomes Pd = P ∘ Z. d: the rows' D.
void attention_dropout_score_gradient_rows(const math::AttentionDropoutHead& mask,
                                           std::int64_t first_query, std::int64_t first_key,
                                           float* p, float* dp, std::int64_t ld, std::int64_t rows,
                                           std::int64_t n, const float* d);

}  // namespace zt::nn::cpu
