// The CPU bias loops: written once as always-inline templates and instantiated per vector
// instruction set (Note [One loop, three instruction sets] in gelu_cpu.cpp), chosen at run time.
#include "nn/kernels/cpu/bias_cpu.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/error.h"
#include "nn/kernels/math/bias_residual_math.h"

namespace zt::nn::cpu {
namespace {

// Note [Column sums in registers]
// A bias gradient sums every column of a (rows, cols) matrix. Streaming row after row through
// all columns adds each row into `sums` in memory: a load, an add and a store per element. The
// loop below instead keeps kColumnBlock columns' running sums in vector registers (a fixed
// trip count the compiler unrolls into 4 AVX-512, 8 AVX2 or 16 SSE accumulators) while
// kRowTile rows of that block stream by, then moves to the next block of the same rows (the
// neighbouring cache lines, still near), and after the last block to the next tile of rows.
// Each column still adds its rows in row order, one f32 add at a time, so the bits are those
// of the plain loop on every path. Narrower blocks (kNarrowColumnBlock, then one column) take
// the last columns.
constexpr std::int64_t kColumnBlock = 64;
constexpr std::int64_t kNarrowColumnBlock = 16;
constexpr std::int64_t kRowTile = 32;

template <std::int64_t kWidth>
[[gnu::always_inline]] inline void column_block_sums(const float* values, std::int64_t rows,
                                                     std::int64_t row_stride, float* sums) {
  float running[kWidth];
  std::memcpy(running, sums, sizeof(running));
  for (std::int64_t n = 0; n < rows; ++n) {
    const float* row = values + n * row_stride;
    for (std::int64_t c = 0; c < kWidth; ++c) running[c] += row[c];
  }
  std::memcpy(sums, running, sizeof(running));
}

[[gnu::always_inline]] inline void column_sums(const float* values, std::int64_t rows,
                                               std::int64_t cols, std::int64_t row_stride,
                                               float* sums) {
  for (std::int64_t tile = 0; tile < rows; tile += kRowTile) {
    const std::int64_t tile_rows = std::min(kRowTile, rows - tile);
    const float* tile_values = values + tile * row_stride;
    std::int64_t first = 0;
    for (; first + kColumnBlock <= cols; first += kColumnBlock) {
      column_block_sums<kColumnBlock>(tile_values + first, tile_rows, row_stride, sums + first);
    }
    for (; first + kNarrowColumnBlock <= cols; first += kNarrowColumnBlock) {
      column_block_sums<kNarrowColumnBlock>(tile_values + first, tile_rows, row_stride,
                                            sums + first);
    }
    for (; first < cols; ++first) {
      column_block_sums<1>(tile_values + first, tile_rows, row_stride, sums + first);
    }
  }
}

[[gnu::always_inline]] inline void bias_add(float* row, const float* bias, std::int64_t cols) {
  for (std::int64_t c = 0; c < cols; ++c) row[c] = math::bias_add(row[c], bias[c]);
}

void column_sums_baseline(const float* values, std::int64_t rows, std::int64_t cols,
                          std::int64_t row_stride, float* sums) {
  column_sums(values, rows, cols, row_stride, sums);
}
void bias_add_baseline(float* row, const float* bias, std::int64_t cols) {
  bias_add(row, bias, cols);
}

#if defined(__x86_64__)
[[gnu::target("avx2,fma")]] void column_sums_avx2(const float* values, std::int64_t rows,
                                                  std::int64_t cols, std::int64_t row_stride,
                                                  float* sums) {
  column_sums(values, rows, cols, row_stride, sums);
}
[[gnu::target("avx2,fma")]] void bias_add_avx2(float* row, const float* bias, std::int64_t cols) {
  bias_add(row, bias, cols);
}
[[gnu::target("avx512f,fma")]] void column_sums_avx512(const float* values, std::int64_t rows,
                                                       std::int64_t cols, std::int64_t row_stride,
                                                       float* sums) {
  column_sums(values, rows, cols, row_stride, sums);
}
[[gnu::target("avx512f,fma")]] void bias_add_avx512(float* row, const float* bias,
                                                    std::int64_t cols) {
  bias_add(row, bias, cols);
}
#endif

void check_supported(VectorIsa isa) {
  const auto& isas = supported_vector_isas();
  ZT_CHECK(std::find(isas.begin(), isas.end(), isa) != isas.end(),
           "a bias loop asked for " + std::string(vector_isa_name(isa)) + ", which this CPU lacks");
}

}  // namespace

void add_bias_f32(float* row, const float* bias, std::int64_t cols, VectorIsa isa) {
  check_supported(isa);
  switch (isa) {
#if defined(__x86_64__)
    case VectorIsa::kAvx512:
      return bias_add_avx512(row, bias, cols);
    case VectorIsa::kAvx2:
      return bias_add_avx2(row, bias, cols);
#endif
    default:
      return bias_add_baseline(row, bias, cols);
  }
}

void add_column_sums_f32(const float* values, std::int64_t rows, std::int64_t cols,
                         std::int64_t row_stride, float* sums, VectorIsa isa) {
  check_supported(isa);
  switch (isa) {
#if defined(__x86_64__)
    case VectorIsa::kAvx512:
      return column_sums_avx512(values, rows, cols, row_stride, sums);
    case VectorIsa::kAvx2:
      return column_sums_avx2(values, rows, cols, row_stride, sums);
#endif
    default:
      return column_sums_baseline(values, rows, cols, row_stride, sums);
  }
}

}  // namespace zt::nn::cpu
