// CPU attention's per-row softmax work, written once over the shared math and compiled for
// each vector instruction set (Note [One loop, three instruction sets] in gelu_cpu.cpp).
#include "nn/kernels/cpu/attention_rows_cpu.h"

#include <cmath>
#include <cstring>
#include <string>

#include "core/error.h"
#include "nn/kernels/math/exp_math.h"

namespace zt::nn::cpu {
namespace {

// Note [Softmax sums in lanes]
// A row's max and its Σ exp(s - max) are sums in an order: the loops keep kLanes partial
// results, element j going to lane j % kLanes (the row's last partial block padded on the
// stack with a value that changes nothing: -inf, whose exp is 0), then combine the lanes
// pairwise in a fixed tree (lane l with lane l + 8, then l + 4, ...). The order depends on
// the row's length alone, so AVX-512 (one register of lanes), AVX2 (two) and the baseline
// (four) add the same numbers in the same order and give the same bits; the element loops
// around them are element by element. This is not the order of a sequential loop (the tiled
// kernel's sums before), which it changes by round-off.
constexpr std::int64_t kLanes = 16;

[[gnu::always_inline]] inline float larger(float a, float b) { return a > b ? a : b; }

// Lane l with lane l + width, widths kLanes / 2, ..., 1 (Note [Softmax sums in lanes]).
[[gnu::always_inline]] inline float max_of_lanes(float (&lanes)[kLanes]) {
  for (std::int64_t width = kLanes / 2; width > 0; width /= 2) {
    for (std::int64_t l = 0; l < width; ++l) lanes[l] = larger(lanes[l], lanes[l + width]);
  }
  return lanes[0];
}
[[gnu::always_inline]] inline float sum_of_lanes(float (&lanes)[kLanes]) {
  for (std::int64_t width = kLanes / 2; width > 0; width /= 2) {
    for (std::int64_t l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

// The last `count` (< kLanes) elements of a row on the stack, padded with `pad`, and back.
[[gnu::always_inline]] inline void load_tail(const float* from, std::int64_t count, float pad,
                                             float (&block)[kLanes]) {
  std::memcpy(block, from, static_cast<std::size_t>(count) * sizeof(float));
  std::fill(block + count, block + kLanes, pad);
}
[[gnu::always_inline]] inline void store_tail(const float (&block)[kLanes], std::int64_t count,
                                              float* to) {
  std::memcpy(to, block, static_cast<std::size_t>(count) * sizeof(float));
}

[[gnu::always_inline]] inline void max_into(const float* block, float (&lanes)[kLanes]) {
  for (std::int64_t l = 0; l < kLanes; ++l) lanes[l] = larger(block[l], lanes[l]);
}
// block = exp(block - shift), added into the lanes.
[[gnu::always_inline]] inline void exp_sum_into(float* block, float shift, float (&lanes)[kLanes]) {
  for (std::int64_t l = 0; l < kLanes; ++l) {
    block[l] = math::exp_f32(block[l] - shift);
    lanes[l] += block[l];
  }
}
[[gnu::always_inline]] inline void exp_shifted(float* block, float shift) {
  for (std::int64_t l = 0; l < kLanes; ++l) block[l] = math::exp_f32(block[l] - shift);
}

[[gnu::always_inline]] inline void scale_row(float* row, std::int64_t n, float factor) {
  for (std::int64_t j = 0; j < n; ++j) row[j] *= factor;
}

// One row of attention_forward_rows: returns exp(max - max').
[[gnu::always_inline]] inline float forward_row(float* row, std::int64_t visible, std::int64_t n,
                                                math::OnlineSoftmax& state) {
  // no visible key: the statistics stay, and exp(max - max) = 1
  if (visible == 0) {
    std::fill(row, row + n, 0.0f);
    return 1.0f;
  }
  const std::int64_t full = visible - visible % kLanes;
  float tail[kLanes];
  load_tail(row + full, visible - full, -INFINITY, tail);
  float lanes[kLanes];
  std::fill(lanes, lanes + kLanes, -INFINITY);
  for (std::int64_t j = 0; j < full; j += kLanes) max_into(row + j, lanes);
  max_into(tail, lanes);
  const float block_max = max_of_lanes(lanes);
  const float new_max = larger(block_max, state.max);
  // new_max is -inf only when every visible score is (and no earlier one was finite)
  const float rescale = new_max == -INFINITY ? 1.0f : math::exp_f32(state.max - new_max);
  std::fill(lanes, lanes + kLanes, 0.0f);
  for (std::int64_t j = 0; j < full; j += kLanes) exp_sum_into(row + j, new_max, lanes);
  exp_sum_into(tail, new_max, lanes);
  store_tail(tail, visible - full, row + full);
  std::fill(row + visible, row + n, 0.0f);
  state.sum = state.sum * rescale + sum_of_lanes(lanes);
  state.max = new_max;
  return rescale;
}

[[gnu::always_inline]] inline void forward_rows(const ScoreBlock& s, math::OnlineSoftmax* state,
                                                float* o, std::int64_t ld_o,
                                                std::int64_t head_dim) {
  for (std::int64_t i = 0; i < s.rows; ++i) {
    const float rescale = forward_row(s.row(i), s.visible(i), s.n, state[i]);
    if (rescale != 1.0f) scale_row(o + i * ld_o, head_dim, rescale);
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
    float* row = s.row(i);
    const std::int64_t visible = s.visible(i), full = visible - visible % kLanes;
    for (std::int64_t j = 0; j < full; j += kLanes) exp_shifted(row + j, lse[i]);
    float tail[kLanes];
    load_tail(row + full, visible - full, -INFINITY, tail);
    exp_shifted(tail, lse[i]);
    store_tail(tail, visible - full, row + full);
    std::fill(row + visible, row + s.n, 0.0f);
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

void attention_score_gradient_rows(const float* p, float* dp, std::int64_t ld, std::int64_t rows,
                                   std::int64_t n, const float* d, VectorIsa isa) {
  on_isa(isa, [&](auto loops) { loops.score_gradient(p, dp, ld, rows, n, d); });
}

}  // namespace zt::nn::cpu
