// Linear forward and backward, on the kernel backend's GEMMs.
//   forward:  y (N, out) = x (N, in) · W^T (in, out) + b
//   backward: dx (N, in) = dy (N, out) · W (out, in)
//             dW (out, in) += dy^T (out, N) · x (N, in);  db (out) += Σ_n dy[n, :]
// N is every leading dimension of x flattened, so (B, T, C) inputs work unchanged.
// Results are computed in f32 and rounded once into the activations' dtype.
#include "nn/layers/linear.h"

#include <cmath>

#include "core/error.h"
#include "nn/dtype_contract.h"

namespace zt::nn {

Linear::Linear(std::string name, std::int64_t in_features, std::int64_t out_features, bool bias,
               std::optional<Init> weight_init)
    : name_(std::move(name)),
      in_features_(in_features),
      out_features_(out_features),
      bias_(bias),
      weight_init_(weight_init) {}

std::vector<ParameterSpec> Linear::parameter_specs() const {
  // Kaiming-uniform-like bound 1/sqrt(in), as PyTorch's default Linear initialization.
  const float bound = 1.0f / std::sqrt(static_cast<float>(in_features_));
  std::vector<ParameterSpec> specs{{name_ + ".weight", Shape{out_features_, in_features_},
                                    weight_init_.value_or(Init::uniform(bound))}};
  if (bias_) {
    specs.push_back({name_ + ".bias", Shape{out_features_},
                     weight_init_ ? Init::zeros() : Init::uniform(bound)});
  }
  return specs;
}

// x (N, in) -> y (N, out), in x's dtype; saves x.
Tensor Linear::forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) {
  // The input comes from the user's batch when this is the model's first layer: a mismatch
  // is their data's shape, not a bug, and a wrong last axis would read past its rows.
  if (input.rank() == 0 || input.dim(input.rank() - 1) != in_features_) {
    throw Error(name_ + ": the input " + input.shape().to_string() + " " +
                std::string(dtype_name(input.dtype())) +
                " does not end in in_features = " + std::to_string(in_features_) +
                " (a batch whose inputs do not fit the model's first layer?)");
  }
  check_parameters(params, input.dtype());
  Tensor output = Tensor::empty(input.shape().with_extent(input.rank() - 1, out_features_),
                                input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.linear_forward(ctx.device, input, params[0], bias_ ? params[1] : Tensor(), output,
                             Tensor());
  ctx.saved.push(input);
  return output;
}

// dy (N, out) -> dx (N, in) in the activations' dtype; dW and db accumulate into the f32
// gradient views directly, so accumulation across calls stays in f32.
Tensor Linear::backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                        ModuleContext& ctx) {
  const Tensor input = ctx.saved.pop();
  check_parameters(params, input.dtype());
  expect_dtype(grad_output, input.dtype(), name_ + " grad_output");
  Tensor grad_input =
      Tensor::empty(input.shape(), input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.linear_backward(ctx.device, input, params[0], grad_output, grad_input, grads[0],
                              bias_ ? grads[1] : Tensor(), Tensor(), Tensor());
  return grad_input;
}

// Parameters come in the compute dtype, which is the activations'.
void Linear::check_parameters(ParameterViews params, DType compute) const {
  ZT_CHECK(params.size() == (bias_ ? 2u : 1u), name_ + " given the wrong number of parameters");
  for (const Tensor& p : params) expect_dtype(p, compute, name_ + " parameter");
}

}  // namespace zt::nn
