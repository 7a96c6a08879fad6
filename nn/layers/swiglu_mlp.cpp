// SwiGluMlp forward and backward: one GEMM for gate and up together, the SwiGLU, one GEMM out.
//   forward:  gate_up (N, 2F) = x (N, C) · Wfc^T                     one linear_forward
//             h (N, F) = silu(gate) * up                             swiglu_forward
//             y (N, C) = h · Wproj^T                                 one linear_forward
//   backward: h recomputed from gate_up                              swiglu_forward
//             dh = dy · Wproj;  dWproj += dy^T · h                   one linear_backward
//             d_gate_up = swiglu'(gate_up, dh), over gate_up itself  swiglu_backward
//             dx = d_gate_up · Wfc;  dWfc += d_gate_up^T · x         one linear_backward
// Forward keeps x and gate_up only: h is one element-wise pass from gate_up, and keeping it
// would add F of the 3F per row the MLP would otherwise hold for backward (Llama's F is
// 3.5 C). The gradient at gate_up is written over the saved gate_up, which backward no
// longer needs once swiglu_backward has read it, so backward's peak is gate_up, h and dh
// (4F per row), then gate_up and dx.
#include "nn/layers/swiglu_mlp.h"

#include "core/error.h"
#include "nn/dtype_contract.h"

namespace zt::nn {

SwiGluMlp::SwiGluMlp(std::string fc_name, std::string proj_name, std::int64_t channels,
                     std::int64_t hidden, Init fc_init, Init proj_init)
    : fc_name_(std::move(fc_name)),
      proj_name_(std::move(proj_name)),
      channels_(channels),
      hidden_(hidden),
      fc_init_(fc_init),
      proj_init_(proj_init) {
  ZT_CHECK(channels_ > 0 && hidden_ > 0, fc_name_ + ": SwiGluMlp needs channels and hidden > 0");
}

std::vector<ParameterSpec> SwiGluMlp::parameter_specs() const {
  return {{fc_name_ + ".weight", Shape{2 * hidden_, channels_}, fc_init_},
          {proj_name_ + ".weight", Shape{channels_, hidden_}, proj_init_}};
}

// x (N, C) -> y (N, C) in x's dtype; saves x and gate_up.
Tensor SwiGluMlp::forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) {
  ZT_CHECK(params.size() == 2u, fc_name_ + " given the wrong number of parameters");
  ZT_CHECK(input.rank() > 0 && input.dim(input.rank() - 1) == channels_,
           fc_name_ + ": the input does not end in " + std::to_string(channels_) + " channels");
  for (const Tensor& p : params) expect_dtype(p, input.dtype(), fc_name_ + " parameter");
  const int last = input.rank() - 1;
  Tensor gate_up = Tensor::empty(input.shape().with_extent(last, 2 * hidden_), input.dtype(),
                                 ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.linear_forward(ctx.device, input, params[0], Tensor(), gate_up, Tensor());
  Tensor h = Tensor::empty(input.shape().with_extent(last, hidden_), input.dtype(), ctx.tracker(),
                           MemoryCategory::kActivations);
  ctx.kernels.swiglu_forward(ctx.device, gate_up, h);
  Tensor output =
      Tensor::empty(input.shape(), input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.linear_forward(ctx.device, h, params[1], Tensor(), output, Tensor());
  ctx.saved.push(input);
  ctx.saved.push(gate_up);
  return output;
}

// dy (N, C) -> dx (N, C); both weight gradients accumulate in f32.
Tensor SwiGluMlp::backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                           ModuleContext& ctx) {
  Tensor gate_up = ctx.saved.pop();
  const Tensor input = ctx.saved.pop();
  ZT_CHECK(params.size() == 2u && grads.size() == 2u,
           fc_name_ + " given the wrong number of parameters");
  expect_dtype(grad_output, input.dtype(), proj_name_ + " grad_output");
  const int last = input.rank() - 1;
  const Shape hidden_shape = input.shape().with_extent(last, hidden_);
  Tensor h =
      Tensor::empty(hidden_shape, input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.swiglu_forward(ctx.device, gate_up, h);
  Tensor grad_h =
      Tensor::empty(hidden_shape, input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.linear_backward(ctx.device, h, params[1], grad_output, grad_h, grads[1], Tensor(),
                              Tensor(), Tensor());
  h = Tensor();
  // d_gate_up over gate_up (the op allows it): no (N, 2F) gradient is allocated.
  ctx.kernels.swiglu_backward(ctx.device, gate_up, grad_h, gate_up);
  grad_h = Tensor();
  Tensor grad_input =
      Tensor::empty(input.shape(), input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.linear_backward(ctx.device, input, params[0], gate_up, grad_input, grads[0], Tensor(),
                              Tensor(), Tensor());
  return grad_input;
}

}  // namespace zt::nn
