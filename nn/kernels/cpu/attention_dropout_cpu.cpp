// CPU attention dropout: the row loops of nn/kernels/math/attention_dropout_math.h compiled for
// each vector instruction set (Note [Vector dropout masks]), the scalar hash's bits on every one.
#include "nn/kernels/cpu/attention_dropout_cpu.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace zt::nn::cpu {
namespace {

// Note [Vector dropout masks]
// The hash of every element (two 64-bit multiplies and three xor-shifts of splitmix64) is most
// of dropout's cost. The row loops below are the shared math's own (attention_dropout_row,
// attention_dropout_score_gradient_row) instantiated in functions compiled for AVX-512, for
// AVX2 with FMA and for the baseline, as Note [One loop, three instruction sets] in gelu_cpu.cpp
// does: the compiler vectorizes the hash over 64-bit lanes and blends the kept products with
// zeros. The loops step the hash state by an add (dropout_next_counter) rather than
// multiplying the index by splitmix64's gamma, which leaves two 64-bit multiplies an element.
// AVX-512 runs them as AVX512DQ's vpmullq where the CPU has it (every AVX-512 CPU but Xeon
// Phi), which takes two thirds of the time of AVX-512F's 32-bit vpmuludq products; AVX2 and
// the baseline (SSE2) build them from vpmuludq/pmuludq, exact modulo 2^64. Integer arithmetic
// is exact and the float work is one product per element, so every path keeps the elements
// dropout_keep keeps and gives the scalar loop's bits
// (tests/unit/nn/attention_dropout_cpu_test.cpp). Fusing the mask into the softmax's row
// loops (attention_rows_cpu.cpp) would save one pass over a cache-resident block, a fifth of
// the hash's time at most (bench_attention_dropout prints both), so the loops stay apart.

[[gnu::always_inline]] inline void dropout_rows(const math::AttentionDropoutHead& mask,
                                                std::int64_t first_query, std::int64_t first_key,
                                                const ScoreBlock& p) {
  for (std::int64_t i = 0; i < p.rows; ++i) {
    math::attention_dropout_row(mask, first_query + i, first_key, p.row(i), p.visible(i));
  }
}

// A key the row does not see has P = 0, so dS = P (Z dPd - D) = 0 and P Z = 0 with no hash.
[[gnu::always_inline]] inline void score_gradient_rows(const math::AttentionDropoutHead& mask,
                                                       std::int64_t first_query,
                                                       std::int64_t first_key, const ScoreBlock& p,
                                                       float* dp, const float* d) {
  for (std::int64_t i = 0; i < p.rows; ++i) {
    const std::int64_t visible = p.visible(i);
    float* dp_row = dp + i * p.ld;
    math::attention_dropout_score_gradient_row(mask, first_query + i, first_key, p.row(i), dp_row,
                                               d[i], visible);
    std::fill(dp_row + visible, dp_row + p.n, 0.0f);
  }
}

// Each loop once per instruction set.
struct Baseline {
  static void forward(const math::AttentionDropoutHead& mask, std::int64_t first_query,
                      std::int64_t first_key, const ScoreBlock& p) {
    dropout_rows(mask, first_query, first_key, p);
  }
  static void backward(const math::AttentionDropoutHead& mask, std::int64_t first_query,
                       std::int64_t first_key, const ScoreBlock& p, float* dp, const float* d) {
    score_gradient_rows(mask, first_query, first_key, p, dp, d);
  }
};

#if defined(__x86_64__)
struct Avx2 {
  [[gnu::target("avx2,fma")]] static void forward(const math::AttentionDropoutHead& mask,
                                                  std::int64_t first_query, std::int64_t first_key,
                                                  const ScoreBlock& p) {
    dropout_rows(mask, first_query, first_key, p);
  }
  [[gnu::target("avx2,fma")]] static void backward(const math::AttentionDropoutHead& mask,
                                                   std::int64_t first_query, std::int64_t first_key,
                                                   const ScoreBlock& p, float* dp, const float* d) {
    score_gradient_rows(mask, first_query, first_key, p, dp, d);
  }
};

// AVX-512 in two builds: with AVX512DQ's 64-bit multiply, and without it for the AVX-512 CPUs
// that lack DQ (Xeon Phi).
template <bool kDq>
struct Avx512;

template <>
struct Avx512<false> {
  [[gnu::target("avx512f,fma")]] static void forward(const math::AttentionDropoutHead& mask,
                                                     std::int64_t first_query,
                                                     std::int64_t first_key, const ScoreBlock& p) {
    dropout_rows(mask, first_query, first_key, p);
  }
  [[gnu::target("avx512f,fma")]] static void backward(const math::AttentionDropoutHead& mask,
                                                      std::int64_t first_query,
                                                      std::int64_t first_key, const ScoreBlock& p,
                                                      float* dp, const float* d) {
    score_gradient_rows(mask, first_query, first_key, p, dp, d);
  }
};

template <>
struct Avx512<true> {
  [[gnu::target("avx512f,avx512dq,fma")]] static void forward(
      const math::AttentionDropoutHead& mask, std::int64_t first_query, std::int64_t first_key,
      const ScoreBlock& p) {
    dropout_rows(mask, first_query, first_key, p);
  }
  [[gnu::target("avx512f,avx512dq,fma")]] static void backward(
      const math::AttentionDropoutHead& mask, std::int64_t first_query, std::int64_t first_key,
      const ScoreBlock& p, float* dp, const float* d) {
    score_gradient_rows(mask, first_query, first_key, p, dp, d);
  }
};

// Whether this CPU has AVX512DQ (asked once).
bool has_avx512dq() {
  static const bool has = __builtin_cpu_supports("avx512dq") != 0;
  return has;
}
#endif

// Calls the loop `call` picks from the struct of `isa`, after checking that this CPU has it.
template <typename Call>
void on_isa(VectorIsa isa, Call call) {
  const auto& isas = supported_vector_isas();
  ZT_CHECK(std::find(isas.begin(), isas.end(), isa) != isas.end(),
           "attention dropout asked for " + std::string(vector_isa_name(isa)) +
               ", which this CPU lacks");
  switch (isa) {
#if defined(__x86_64__)
    case VectorIsa::kAvx512:
      return has_avx512dq() ? call(Avx512<true>{}) : call(Avx512<false>{});
    case VectorIsa::kAvx2:
      return call(Avx2{});
#endif
    default:
      return call(Baseline{});
  }
}

}  // namespace

void attention_dropout_rows(const math::AttentionDropoutHead& mask, std::int64_t first_query,
                            std::int64_t first_key, const ScoreBlock& p, VectorIsa isa) {
  on_isa(isa, [&](auto loops) { loops.forward(mask, first_query, first_key, p); });
}

void attention_dropout_score_gradient_rows(const math::AttentionDropoutHead& mask,
                                           std::int64_t first_query, std::int64_t first_key,
                                           const ScoreBlock& p, float* dp, const float* d,
                                           VectorIsa isa) {
  on_isa(isa, [&](auto loops) { loops.backward(mask, first_query, first_key, p, dp, d); });
}

}  // namespace zt::nn::cpu
