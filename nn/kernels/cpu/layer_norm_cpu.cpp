// CPU LayerNorm: the shared row math compiled once per vector instruction set (Note [One loop,
// three instruction sets] in gelu_cpu.cpp), rows in parallel through f32 rows (dtype_io.h),
// so bf16/f16 rows are widened into a row of workspace per chunk and each output rounded
// once. On a meta device only the workspace is allocated (Note [Dry kernels]).
#include "nn/kernels/cpu/layer_norm_cpu.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "core/parallel_for.h"
#include "nn/kernels/cpu/add_cpu.h"
#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/math/layer_norm_math.h"

namespace zt::nn::cpu {
namespace {

using ForwardRow = void (*)(const float* x, const float* weight, const float* bias,
                            std::int64_t channels, float eps, float* y, float* mean, float* rstd);
using BackwardRow = void (*)(const float* dy, const float* x, const float* weight, float mean,
                             float rstd, std::int64_t channels, float* dx, float* dweight,
                             float* dbias);

// The row math is inlined into each instruction set's function below, and vectorized there
// (its sums in the lane order of Note [LayerNorm's row sums], the same on every width).
[[gnu::always_inline]] inline void forward_row(const float* x, const float* weight,
                                               const float* bias, std::int64_t channels, float eps,
                                               float* y, float* mean, float* rstd) {
  math::layer_norm_forward_row(x, weight, bias, channels, eps, y, mean, rstd);
}
[[gnu::always_inline]] inline void backward_row(const float* dy, const float* x,
                                                const float* weight, float mean, float rstd,
                                                std::int64_t channels, float* dx, float* dweight,
                                                float* dbias) {
  math::layer_norm_backward_row(dy, x, weight, mean, rstd, channels, dx, dweight, dbias);
}

void forward_baseline(const float* x, const float* weight, const float* bias, std::int64_t channels,
                      float eps, float* y, float* mean, float* rstd) {
  forward_row(x, weight, bias, channels, eps, y, mean, rstd);
}
void backward_baseline(const float* dy, const float* x, const float* weight, float mean, float rstd,
                       std::int64_t channels, float* dx, float* dweight, float* dbias) {
  backward_row(dy, x, weight, mean, rstd, channels, dx, dweight, dbias);
}

#if defined(__x86_64__)
[[gnu::target("avx2,fma")]] void forward_avx2(const float* x, const float* weight,
                                              const float* bias, std::int64_t channels, float eps,
                                              float* y, float* mean, float* rstd) {
  forward_row(x, weight, bias, channels, eps, y, mean, rstd);
}
[[gnu::target("avx2,fma")]] void backward_avx2(const float* dy, const float* x, const float* weight,
                                               float mean, float rstd, std::int64_t channels,
                                               float* dx, float* dweight, float* dbias) {
  backward_row(dy, x, weight, mean, rstd, channels, dx, dweight, dbias);
}
[[gnu::target("avx512f,fma")]] void forward_avx512(const float* x, const float* weight,
                                                   const float* bias, std::int64_t channels,
                                                   float eps, float* y, float* mean, float* rstd) {
  forward_row(x, weight, bias, channels, eps, y, mean, rstd);
}
[[gnu::target("avx512f,fma")]] void backward_avx512(const float* dy, const float* x,
                                                    const float* weight, float mean, float rstd,
                                                    std::int64_t channels, float* dx,
                                                    float* dweight, float* dbias) {
  backward_row(dy, x, weight, mean, rstd, channels, dx, dweight, dbias);
}
#endif

void check_supported(VectorIsa isa) {
  const auto& isas = supported_vector_isas();
  ZT_CHECK(std::find(isas.begin(), isas.end(), isa) != isas.end(),
           "LayerNorm asked for " + std::string(vector_isa_name(isa)) + ", which this CPU lacks");
}

ForwardRow forward_row_for(VectorIsa isa) {
  check_supported(isa);
  switch (isa) {
#if defined(__x86_64__)
    case VectorIsa::kAvx512:
      return forward_avx512;
    case VectorIsa::kAvx2:
      return forward_avx2;
#endif
    default:
      return forward_baseline;
  }
}

BackwardRow backward_row_for(VectorIsa isa) {
  check_supported(isa);
  switch (isa) {
#if defined(__x86_64__)
    case VectorIsa::kAvx512:
      return backward_avx512;
    case VectorIsa::kAvx2:
      return backward_avx2;
#endif
    default:
      return backward_baseline;
  }
}

// The chunks a row loop over `rows` rows of `row_elements` is cut into (F32Rows' scratch).
std::int64_t row_chunks(std::int64_t rows, std::int64_t row_elements) {
  return std::max<std::int64_t>(1, parallel_chunk_count(rows, parallel_row_grain(row_elements)));
}

}  // namespace

void layer_norm_forward_row_f32(const float* x, const float* weight, const float* bias,
                                std::int64_t channels, float eps, float* y, float* mean,
                                float* rstd, VectorIsa isa) {
  forward_row_for(isa)(x, weight, bias, channels, eps, y, mean, rstd);
}

void layer_norm_backward_row_f32(const float* dy, const float* x, const float* weight, float mean,
                                 float rstd, std::int64_t channels, float* dx, float* dweight,
                                 float* dbias, VectorIsa isa) {
  backward_row_for(isa)(dy, x, weight, mean, rstd, channels, dx, dweight, dbias);
}

void layer_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps,
                        const Tensor& y, const Tensor& mean, const Tensor& rstd,
                        MemoryTracker& tracker) {
  const std::int64_t channels = weight.numel();
  const std::int64_t rows = x.numel() / channels;
  const Tensor weight32 = to_f32_scratch(weight, tracker);
  const Tensor bias32 = to_f32_scratch(bias, tracker);
  const std::int64_t chunks = row_chunks(rows, channels);
  const F32Rows x_rows(x, channels, tracker, chunks);
  const F32Rows y_rows(y, channels, tracker, chunks);
  if (x.device().meta) return;
  const ForwardRow row_fn = forward_row_for(widest_vector_isa());
  const float* w = weight32.data_as<float>();
  const float* b = bias32.data_as<float>();
  float* m = mean.data_as<float>();
  float* r = rstd.data_as<float>();
  parallel_for_chunks(rows, parallel_row_grain(channels),
                      [&](std::int64_t chunk, std::int64_t first, std::int64_t last) {
                        for (std::int64_t n = first; n < last; ++n) {
                          row_fn(x_rows.load(n, chunk), w, b, channels, eps, y_rows.out(n, chunk),
                                 m + n, r + n);
                          y_rows.store(n, chunk);
                        }
                      });
}

void layer_norm_backward(const Tensor& x, const Tensor& weight, const Tensor& mean,
                         const Tensor& rstd, const Tensor& dy, const Tensor& dx,
                         const Tensor& dweight, const Tensor& dbias, MemoryTracker& tracker) {
  const std::int64_t channels = weight.numel();
  const std::int64_t rows = x.numel() / channels;
  const Tensor weight32 = to_f32_scratch(weight, tracker);
  // dweight and dbias sum over rows: each chunk sums its rows into its own (dw, db) pair of
  // partials, which are then added in chunk order (Note [Chunks fixed by size]).
  const std::int64_t grain = parallel_sum_grain(rows, parallel_row_grain(channels));
  const std::int64_t chunks = std::max<std::int64_t>(1, parallel_chunk_count(rows, grain));
  const F32Rows x_rows(x, channels, tracker, chunks);
  const F32Rows dy_rows(dy, channels, tracker, chunks);
  const F32Rows dx_rows(dx, channels, tracker, chunks);
  const Tensor partials =
      Tensor::zeros(Shape{chunks, 2, channels}, DType::kF32, tracker, MemoryCategory::kWorkspace);
  if (x.device().meta) return;
  const BackwardRow row_fn = backward_row_for(widest_vector_isa());
  const float* w = weight32.data_as<float>();
  const float* m = mean.data_as<float>();
  const float* r = rstd.data_as<float>();
  float* partial = partials.data_as<float>();
  parallel_for_chunks(rows, grain, [&](std::int64_t chunk, std::int64_t first, std::int64_t last) {
    float* dw = partial + chunk * 2 * channels;
    float* db = dw + channels;
    for (std::int64_t n = first; n < last; ++n) {
      row_fn(dy_rows.load(n, chunk), x_rows.load(n, chunk), w, m[n], r[n], channels,
             dx_rows.out(n, chunk), dw, db);
      dx_rows.store(n, chunk);
    }
  });
  float* dw = dweight.data_as<float>();
  float* db = dbias.data_as<float>();
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    const float* chunk_dw = partial + chunk * 2 * channels;
    add_f32(dw, chunk_dw, dw, channels);
    add_f32(db, chunk_dw + channels, db, channels);
  }
}

}  // namespace zt::nn::cpu
