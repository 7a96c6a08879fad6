// CPU RMSNorm: one row at a time through f32 rows (dtype_io.h), so bf16/f16 rows are widened
// into one row of workspace and each output rounded once. On a meta device only the
// workspace is allocated (Note [Dry kernels]).
#include "nn/kernels/cpu/rms_norm_cpu.h"

#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/llama_op_checks.h"
#include "nn/kernels/math/rms_norm_math.h"

namespace zt::nn::cpu {

void rms_norm_forward(const Tensor& x, const Tensor& weight, float eps, const Tensor& y,
                      const Tensor& rstd, MemoryTracker& tracker) {
  const RowShape shape = rms_norm_shape(x, weight, y, rstd);
  const Tensor weight32 = to_f32_scratch(weight, tracker);
  const F32Rows x_rows(x, shape.channels, tracker);
  const F32Rows y_rows(y, shape.channels, tracker);
  if (x.device().meta) return;
  const float* w = weight32.data_as<float>();
  float* r = rstd.data_as<float>();
  for (std::int64_t n = 0; n < shape.rows; ++n) {
    math::rms_norm_forward_row(x_rows.load(n), w, shape.channels, eps, y_rows.out(n), r + n);
    y_rows.store(n);
  }
}

void rms_norm_backward(const Tensor& x, const Tensor& weight, const Tensor& rstd, const Tensor& dy,
                       const Tensor& dx, const Tensor& dweight, MemoryTracker& tracker) {
  const RowShape shape = rms_norm_backward_shape(x, weight, rstd, dy, dx, dweight);
  const Tensor weight32 = to_f32_scratch(weight, tracker);
  const F32Rows x_rows(x, shape.channels, tracker);
  const F32Rows dy_rows(dy, shape.channels, tracker);
  const F32Rows dx_rows(dx, shape.channels, tracker);
  if (x.device().meta) return;
  const float* w = weight32.data_as<float>();
  const float* r = rstd.data_as<float>();
  float* dw = dweight.data_as<float>();
  for (std::int64_t n = 0; n < shape.rows; ++n) {
    math::rms_norm_backward_row(dy_rows.load(n), x_rows.load(n), w, r[n], shape.channels,
                                dx_rows.out(n), dw);
    dx_rows.store(n);
  }
}

}  // namespace zt::nn::cpu
