// Dropout on the probability blocks of CPU attention's tiles (Note [Attention dropout] in
// nn/kernels/math/attention_dropout_math.h): the shared mask arithmetic's loops compiled for each
// vector instruction set, so every path keeps the elements CUDA keeps.
#pragma once

#include <cstdint>

#include "core/vector_isa.h"
#include "nn/kernels/cpu/attention_rows_cpu.h"
#include "nn/kernels/math/attention_dropout_math.h"

namespace zt::nn::cpu {

// The forward, in place: the probabilities p (a block of rows of query first_query on, keys
// first_key on) -> P ∘ Z over each row's visible keys (the masked ones are 0 either way).
void attention_dropout_rows(const math::AttentionDropoutHead& mask, std::int64_t first_query,
                            std::int64_t first_key, const ScoreBlock& p,
                            VectorIsa isa = widest_vector_isa());

// The backward, in place over the block p (probabilities P of query first_query on, keys
// first_key on) and dp (p's shape and row stride): dp holds dPd = dO V^T and becomes
// dS = P ∘ (Z dPd - D), p becomes Pd = P ∘ Z, over each row's visible keys; dS is 0 at the
// masked ones (P is 0 there, and stays 0). d: the rows' D.
void attention_dropout_score_gradient_rows(const math::AttentionDropoutHead& mask,
                                           std::int64_t first_query, std::int64_t first_key,
                                           const ScoreBlock& p, float* dp, const float* d,
                                           VectorIsa isa = widest_vector_isa());

}  // namespace zt::nn::cpu
