// The built-in losses behind the Loss interface. Mean squared error is composed of device ops
// only, so it runs wherever the output lives.
#include <string>

#include "core/error.h"
#include "nn/loss/loss.h"

namespace zt::nn {
namespace {

class SoftmaxCrossEntropyLoss final : public Loss {
 public:
  explicit SoftmaxCrossEntropyLoss(std::int64_t classes) : classes_(classes) {}
  std::string_view name() const override { return "softmax_cross_entropy"; }
  LossResult compute(const Tensor& output, const Tensor& targets, float grad_scale,
                     LossContext& ctx) const override {
    return softmax_cross_entropy(output, targets, grad_scale, ctx.device, ctx.kernels, classes_);
  }

 private:
  std::int64_t classes_;  // the softmax's span; 0: every column
};

class MeanSquaredErrorLoss final : public Loss {
 public:
  std::string_view name() const override { return "mean_squared_error"; }
  LossResult compute(const Tensor& output, const Tensor& targets, float grad_scale,
                     LossContext& ctx) const override {
    if (output.numel() != targets.numel() || targets.dtype() != DType::kF32 ||
        !is_floating(output.dtype())) {
      throw Error(
          "mean_squared_error: expects floating outputs and f32 targets with as many "
          "elements; got output " +
          output.shape().to_string() + " " + std::string(dtype_name(output.dtype())) +
          " and targets " + targets.shape().to_string() + " " +
          std::string(dtype_name(targets.dtype())));
    }
    DeviceOps& ops = ctx.device.ops();
    // diff = output - target in f32, so a bf16 output's error is not rounded before squaring.
    const Tensor diff =
        Tensor::empty(targets.shape(), DType::kF32, ctx.tracker(), MemoryCategory::kActivations);
    ops.cast(output.view(0, targets.shape()), diff);
    ops.axpby(-1.0f, targets, 1.0f, diff);
    LossResult result;
    result.rows = targets.numel();
    result.loss_sum = ops.sum_of_squares(diff);
    result.grad_logits =
        Tensor::empty(output.shape(), output.dtype(), ctx.tracker(), MemoryCategory::kActivations);
    ops.axpby(2.0f * grad_scale, diff, 0.0f, result.grad_logits.view(0, targets.shape()));
    return result;
  }
};

}  // namespace

std::unique_ptr<Loss> make_softmax_cross_entropy_loss(std::int64_t classes) {
  return std::make_unique<SoftmaxCrossEntropyLoss>(classes);
}

std::unique_ptr<Loss> make_mean_squared_error_loss() {
  return std::make_unique<MeanSquaredErrorLoss>();
}

}  // namespace zt::nn
