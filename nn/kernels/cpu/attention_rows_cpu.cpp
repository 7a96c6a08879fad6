// CPU attention's per-row softmax work, written once over the shared math and compiled for
// each vector instruction set (Note [One loop, three instruction sets] in gelu_cpu.cpp).
#include "nn/kernels/cpu/attention_rows_cpu.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "nn/kernels/math/exp_math.h"
#include "nn/kernels/math/lane_sums_math.h"

namespace zt::nn::cpu {
namespace {

// Note [Softmax sums in lanes]
// A row's max, its Σ exp(s - max) and D = dO · O are sums in lanes (Note [Sums in lanes] in
// nn/kernels/math/lane_sums_math.h), so every vector path gives the same bits; the other loops
// are element by element. This is not the order of a sequential loop (the tiled kernel's sums
// before), which it changes by round-off. A row is taken kLanes scores at a time up to n
// rounded up (the rows' stride leaves room): the groups past the last visible key select -inf
// for the max and 0 for p, so no group needs a copy or a scalar remainder, and the masked
// scores come out exactly 0.
constexpr std::int64_t kLanes = kAttentionRowLanes;

using math::larger;
using math::max_of_lanes;
using math::sum_of_lanes;

// The max of row[0, visible) into the lanes.
[[gnu::always_inline]] inline void max_into(const float* row, std::int64_t visible,
                                            float (&lanes)[kLanes]) {
  std::int64_t j0 = 0;
  for (; j0 + kLanes <= visible; j0 += kLanes) {
    for (std::int64_t l = 0; l < kLanes; ++l) lanes[l] = larger(row[j0 + l], lanes[l]);
  }
  if (j0 == visible) return;
  const std::int64_t left = visible - j0;
  for (std::int64_t l = 0; l < kLanes; ++l) {
    lanes[l] = larger(l < left ? row[j0 + l] : -INFINITY, lanes[l]);
  }
}

// row[j] = exp(row[j] - shift) for j < visible, 0 for visible <= j < n rounded up to kLanes;
// the p of the visible keys added into the lanes.
[[gnu::always_inline]] inline void exp_into(float* row, std::int64_t visible, std::int64_t n,
                                            float shift, float (&lanes)[kLanes]) {
  std::int64_t j0 = 0;
  for (; j0 + kLanes <= visible; j0 += kLanes) {
    for (std::int64_t l = 0; l < kLanes; ++l) {
      row[j0 + l] = math::exp_f32(row[j0 + l] - shift);
      lanes[l] += row[j0 + l];
    }
  }
  for (; j0 < n; j0 += kLanes) {
    const std::int64_t left = visible - j0;  // may be <= 0: a group of masked keys only
    for (std::int64_t l = 0; l < kLanes; ++l) {
      row[j0 + l] = l < left ? math::exp_f32(row[j0 + l] - shift) : 0.0f;
      lanes[l] += row[j0 + l];
    }
  }
}

[[gnu::always_inline]] inline void scale_row(float* row, std::int64_t n, float factor) {
  for (std::int64_t j = 0; j < n; ++j) row[j] *= factor;
}

// One row of attention_forward_rows: returns exp(max - max').
[[gnu::always_inline]] inline float forward_row(float* row, std::int64_t visible, std::int64_t n,
                                                math::OnlineSoftmax& state) {
  float lanes[kLanes];
  std::fill(lanes, lanes + kLanes, -INFINITY);
  max_into(row, visible, lanes);
  const float new_max = larger(max_of_lanes(lanes), state.max);
  // new_max is -inf only when no key, visible now or before, had a finite score: keep the
  // statistics (exp(-inf - -inf) would be NaN). A row's first block (the only one below
  // kKeyBlock keys) rescales by exp(-inf) = 0: no scalar exp_f32 on the row's critical path.
  const float rescale = new_max == -INFINITY     ? 1.0f
                        : state.max == -INFINITY ? 0.0f
                                                 : math::exp_f32(state.max - new_max);
  std::fill(lanes, lanes + kLanes, 0.0f);
  exp_into(row, visible, n, new_max, lanes);
  state.sum = state.sum * rescale + sum_of_lanes(lanes);
  state.max = new_max;
  return rescale;
}

[[gnu::always_inline]] inline void forward_rows(const ScoreBlock& s, math::OnlineSoftmax* state,
                                                float* o, std::int64_t ld_o,
                                                std::int64_t head_dim) {
  for (std::int64_t i = 0; i < s.rows; ++i) {
    // Before a row's first finite score its accumulator holds nothing (the first key block's
    // P v product writes it with beta 0, later ones add P = 0 rows): scaling it by the 0 that
    // rescale then is would only read o's cold rows, which cost a third of this loop's time.
    const bool accumulated = state[i].max != -INFINITY;
    const float rescale = forward_row(s.row(i), s.visible(i), s.n, state[i]);
    if (accumulated && rescale != 1.0f) scale_row(o + i * ld_o, head_dim, rescale);
  }
}

[[gnu::always_inline]] inline void forward_finish(const math::OnlineSoftmax* state,
                                                  std::int64_t rows, float* o, std::int64_t ld_o,
                                                  std::int64_t head_dim, float* lse) {
  for (std::int64_t i = 0; i < rows; ++i) {
    scale_row(o + i * ld_o, head_dim, 1.0f / state[i].sum);
    lse[i] = math::online_softmax_lse(state[i]);
  }
}

[[gnu::always_inline]] inline void probability_rows(const ScoreBlock& s, const float* lse) {
  for (std::int64_t i = 0; i < s.rows; ++i) {
    float discarded_sum[kLanes] = {};  // P needs no sum: the compiler drops it
    exp_into(s.row(i), s.visible(i), s.n, lse[i], discarded_sum);
  }
}

// Lane l sums elements l, l + kLanes, ... (Note [Softmax sums in lanes]); a last part group
// element by element, into the same lanes.
[[gnu::always_inline]] inline void output_dots(const float* o, std::int64_t ld_o, const float* d_o,
                                               std::int64_t ld_d_o, std::int64_t rows,
                                               std::int64_t head_dim, float* d) {
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* o_row = o + i * ld_o;
    const float* d_o_row = d_o + i * ld_d_o;
    float lanes[kLanes] = {};
    std::int64_t j0 = 0;
    for (; j0 + kLanes <= head_dim; j0 += kLanes) {
      for (std::int64_t l = 0; l < kLanes; ++l) lanes[l] += o_row[j0 + l] * d_o_row[j0 + l];
    }
    for (std::int64_t l = 0; j0 + l < head_dim; ++l) lanes[l] += o_row[j0 + l] * d_o_row[j0 + l];
    d[i] = sum_of_lanes(lanes);
  }
}

[[gnu::always_inline]] inline void score_gradient_rows(const float* p, float* dp, std::int64_t ld,
                                                       std::int64_t rows, std::int64_t n,
                                                       const float* d) {
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* p_row = p + i * ld;
    float* dp_row = dp + i * ld;
    for (std::int64_t j = 0; j < n; ++j) {
      dp_row[j] = math::attention_score_gradient(p_row[j], dp_row[j], d[i]);
    }
  }
}

// Each loop once per instruction set (Note [One loop, three instruction sets]).
struct Baseline {
  static void forward(const ScoreBlock& s, math::OnlineSoftmax* state, float* o, std::int64_t ld_o,
                      std::int64_t head_dim) {
    forward_rows(s, state, o, ld_o, head_dim);
  }
  static void finish(const math::OnlineSoftmax* state, std::int64_t rows, float* o,
                     std::int64_t ld_o, std::int64_t head_dim, float* lse) {
    forward_finish(state, rows, o, ld_o, head_dim, lse);
  }
  static void probability(const ScoreBlock& s, const float* lse) { probability_rows(s, lse); }
  static void dots(const float* o, std::int64_t ld_o, const float* d_o, std::int64_t ld_d_o,
                   std::int64_t rows, std::int64_t head_dim, float* d) {
    output_dots(o, ld_o, d_o, ld_d_o, rows, head_dim, d);
  }
  static void score_gradient(const float* p, float* dp, std::int64_t ld, std::int64_t rows,
                             std::int64_t n, const float* d) {
    score_gradient_rows(p, dp, ld, rows, n, d);
  }
};

#if defined(__x86_64__)
struct Avx2 {
  [[gnu::target("avx2,fma")]] static void forward(const ScoreBlock& s, math::OnlineSoftmax* state,
                                                  float* o, std::int64_t ld_o,
                                                  std::int64_t head_dim) {
    forward_rows(s, state, o, ld_o, head_dim);
  }
  [[gnu::target("avx2,fma")]] static void finish(const math::OnlineSoftmax* state,
                                                 std::int64_t rows, float* o, std::int64_t ld_o,
                                                 std::int64_t head_dim, float* lse) {
    forward_finish(state, rows, o, ld_o, head_dim, lse);
  }
  [[gnu::target("avx2,fma")]] static void probability(const ScoreBlock& s, const float* lse) {
    probability_rows(s, lse);
  }
  [[gnu::target("avx2,fma")]] static void dots(const float* o, std::int64_t ld_o, const float* d_o,
                                               std::int64_t ld_d_o, std::int64_t rows,
                                               std::int64_t head_dim, float* d) {
    output_dots(o, ld_o, d_o, ld_d_o, rows, head_dim, d);
  }
  [[gnu::target("avx2,fma")]] static void score_gradient(const float* p, float* dp, std::int64_t ld,
                                                         std::int64_t rows, std::int64_t n,
                                                         const float* d) {
    score_gradient_rows(p, dp, ld, rows, n, d);
  }
};

struct Avx512 {
  [[gnu::target("avx512f,fma")]] static void forward(const ScoreBlock& s,
                                                     math::OnlineSoftmax* state, float* o,
                                                     std::int64_t ld_o, std::int64_t head_dim) {
    forward_rows(s, state, o, ld_o, head_dim);
  }
  [[gnu::target("avx512f,fma")]] static void finish(const math::OnlineSoftmax* state,
                                                    std::int64_t rows, float* o, std::int64_t ld_o,
                                                    std::int64_t head_dim, float* lse) {
    forward_finish(state, rows, o, ld_o, head_dim, lse);
  }
  [[gnu::target("avx512f,fma")]] static void probability(const ScoreBlock& s, const float* lse) {
    probability_rows(s, lse);
  }
  [[gnu::target("avx512f,fma")]] static void dots(const float* o, std::int64_t ld_o,
                                                  const float* d_o, std::int64_t ld_d_o,
                                                  std::int64_t rows, std::int64_t head_dim,
                                                  float* d) {
    output_dots(o, ld_o, d_o, ld_d_o, rows, head_dim, d);
  }
  [[gnu::target("avx512f,fma")]] static void score_gradient(const float* p, float* dp,
                                                            std::int64_t ld, std::int64_t rows,
                                                            std::int64_t n, const float* d) {
    score_gradient_rows(p, dp, ld, rows, n, d);
  }
};
#endif

// Calls the loop `call` picks from the struct of `isa`, after checking that this CPU has it.
template <typename Call>
void on_isa(VectorIsa isa, Call call) {
  const auto& isas = supported_vector_isas();
  ZT_CHECK(std::find(isas.begin(), isas.end(), isa) != isas.end(),
           "attention asked for " + std::string(vector_isa_name(isa)) + ", which this CPU lacks");
  switch (isa) {
#if defined(__x86_64__)
    case VectorIsa::kAvx512:
      return call(Avx512{});
    case VectorIsa::kAvx2:
      return call(Avx2{});
#endif
    default:
      return call(Baseline{});
  }
}

}  // namespace

void attention_forward_rows(const ScoreBlock& s, math::OnlineSoftmax* state, float* o,
                            std::int64_t ld_o, std::int64_t head_dim, VectorIsa isa) {
  on_isa(isa, [&](auto loops) { loops.forward(s, state, o, ld_o, head_dim); });
}

void attention_forward_finish(const math::OnlineSoftmax* state, std::int64_t rows, float* o,
                              std::int64_t ld_o, std::int64_t head_dim, float* lse, VectorIsa isa) {
  on_isa(isa, [&](auto loops) { loops.finish(state, rows, o, ld_o, head_dim, lse); });
}

void attention_probability_rows(const ScoreBlock& s, const float* lse, VectorIsa isa) {
  on_isa(isa, [&](auto loops) { loops.probability(s, lse); });
}

void attention_output_dots(const float* o, std::int64_t ld_o, const float* d_o, std::int64_t ld_d_o,
                           std::int64_t rows, std::int64_t head_dim, float* d, VectorIsa isa) {
  on_isa(isa, [&](auto loops) { loops.dots(o, ld_o, d_o, ld_d_o, rows, head_dim, d); });
}

void attention_score_gradient_rows(const float* p, float* dp, std::int64_t ld, std::int64_t rows,
                                   std::int64_t n, const float* d, VectorIsa isa) {
  on_isa(isa, [&](auto loops) { loops.score_gradient(p, dp, ld, rows, n, d); });
}

}  // namespace zt::nn::cpu
