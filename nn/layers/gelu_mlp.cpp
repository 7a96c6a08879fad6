// GeluMlp forward and backward: two Linears with the GELU between them fused into their GEMMs.
//   forward:  pre (N, H) = x (N, C) · Wfc^T + bfc;  h = gelu(pre)       one linear_forward
//             y (N, C) = h · Wproj^T + bproj                            one linear_forward
//   backward: dWproj += dy^T · h;  dbproj += Σ_n dy;
//             dpre (N, H) = gelu'(pre) ⊙ (dy · Wproj);  dbfc += Σ_n dpre  one linear_backward
//             dx = dpre · Wfc;  dWfc += dpre^T · x                      one linear_backward
// The same arithmetic as Linear, Gelu, Linear, with the GELU's derivative applied where the
// GEMM that makes its gradient ends (where a GPU library can fuse it), and one fewer (N, H)
// activation gradient allocated in backward. The peak inside backward is what Linear, Gelu,
// Linear reach: pre, h and one (N, H) gradient (theirs: pre, h and dh, then pre, dh, dpre).
#include "nn/layers/gelu_mlp.h"

#include "core/error.h"
#include "nn/dtype_contract.h"

namespace zt::nn {

GeluMlp::GeluMlp(std::string fc_name, std::string proj_name, std::int64_t channels,
                 std::int64_t hidden, Init fc_init, Init proj_init)
    : fc_name_(std::move(fc_name)),
      proj_name_(std::move(proj_name)),
      channels_(channels),
      hidden_(hidden),
      fc_init_(fc_init),
      proj_init_(proj_init) {}

std::vector<ParameterSpec> GeluMlp::parameter_specs() const {
  return {{fc_name_ + ".weight", Shape{hidden_, channels_}, fc_init_},
          {fc_name_ + ".bias", Shape{hidden_}, Init::zeros()},
          {proj_name_ + ".weight", Shape{channels_, hidden_}, proj_init_},
          {proj_name_ + ".bias", Shape{channels_}, Init::zeros()}};
}

// x (N, C) -> y (N, C) in x's dtype; saves x, pre and h.
Tensor GeluMlp::forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) {
  ZT_CHECK(params.size() == 4u, fc_name_ + " given the wrong number of parameters");
  ZT_CHECK(input.rank() > 0 && input.dim(input.rank() - 1) == channels_,
           fc_name_ + ": the input does not end in " + std::to_string(channels_) + " channels");
  for (const Tensor& p : params) expect_dtype(p, input.dtype(), fc_name_ + " parameter");
  const Shape hidden_shape = input.shape().with_extent(input.rank() - 1, hidden_);
  Tensor pre =
      Tensor::empty(hidden_shape, input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  Tensor h =
      Tensor::empty(hidden_shape, input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.linear_forward(ctx.device, input, params[0], params[1], h, pre);
  Tensor output =
      Tensor::empty(input.shape(), input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.linear_forward(ctx.device, h, params[2], params[3], output, Tensor());
  ctx.saved.push(input);
  ctx.saved.push(pre);
  ctx.saved.push(h);
  return output;
}

// dy (N, C) -> dx (N, C); the four parameter gradients accumulate in f32.
Tensor GeluMlp::backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                         ModuleContext& ctx) {
  Tensor h = ctx.saved.pop();
  Tensor pre = ctx.saved.pop();
  const Tensor input = ctx.saved.pop();
  ZT_CHECK(params.size() == 4u && grads.size() == 4u,
           fc_name_ + " given the wrong number of parameters");
  expect_dtype(grad_output, input.dtype(), proj_name_ + " grad_output");
  Tensor grad_pre =
      Tensor::empty(pre.shape(), pre.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.linear_backward(ctx.device, h, params[2], grad_output, grad_pre, grads[2], grads[3],
                              pre, grads[1]);
  // h and pre are spent: freed before dx is allocated, as proj and Gelu freed what they saved
  // when their backward returned (held, dx would come on top of them: one (N, C) above the
  // peak of Linear, Gelu, Linear).
  h = Tensor();
  pre = Tensor();
  Tensor grad_input =
      Tensor::empty(input.shape(), input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.linear_backward(ctx.device, input, params[0], grad_pre, grad_input, grads[0],
                              Tensor(), Tensor(), Tensor());
  return grad_input;
}

}  // namespace zt::nn
