// CPU SwiGLU: one row at a time through f32 rows (dtype_io.h), each output rounded once. A
// row of gate_up is loaded whole before its gradient row is stored, so d_gate_up may be
// gate_up (in f32 both are the same memory, and each element pair is read before written).
#include "nn/kernels/cpu/swiglu_cpu.h"

#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/llama_op_checks.h"
#include "nn/kernels/math/swiglu_math.h"

namespace zt::nn::cpu {

void swiglu_forward(const Tensor& gate_up, const Tensor& h, MemoryTracker& tracker) {
  const RowShape shape = swiglu_shape(gate_up, h);
  const std::int64_t hidden = shape.channels;
  const F32Rows gate_up_rows(gate_up, 2 * hidden, tracker);
  const F32Rows h_rows(h, hidden, tracker);
  if (gate_up.device().meta) return;
  for (std::int64_t n = 0; n < shape.rows; ++n) {
    const float* gate = gate_up_rows.load(n);
    const float* up = gate + hidden;
    float* out = h_rows.out(n);
    for (std::int64_t f = 0; f < hidden; ++f) out[f] = math::swiglu_forward(gate[f], up[f]);
    h_rows.store(n);
  }
}

void swiglu_backward(const Tensor& gate_up, const Tensor& dh, const Tensor& d_gate_up,
                     MemoryTracker& tracker) {
  const RowShape shape = swiglu_backward_shape(gate_up, dh, d_gate_up);
  const std::int64_t hidden = shape.channels;
  const F32Rows gate_up_rows(gate_up, 2 * hidden, tracker);
  const F32Rows dh_rows(dh, hidden, tracker);
  const F32Rows d_gate_up_rows(d_gate_up, 2 * hidden, tracker);
  if (gate_up.device().meta) return;
  for (std::int64_t n = 0; n < shape.rows; ++n) {
    const float* gate = gate_up_rows.load(n);
    const float* up = gate + hidden;
    const float* d_h = dh_rows.load(n);
    float* d_gate = d_gate_up_rows.out(n);
    float* d_up = d_gate + hidden;
    for (std::int64_t f = 0; f < hidden; ++f) {
      math::swiglu_backward(gate[f], up[f], d_h[f], &d_gate[f], &d_up[f]);
    }
    d_gate_up_rows.store(n);
  }
}

}  // namespace zt::nn::cpu
