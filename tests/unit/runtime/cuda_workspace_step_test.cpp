// Note [Workspace requests]: a whole training step (forward, loss, backward, optimizer step)
// of GPT-2 small and of a Llama runs through the dry CUDA backend on a meta GPU, behind a
// decorator that computes each op's request from the op's own arguments with the request
// functions the real backend allocates through, and holds every workspace allocation and free
// the dry op made (name, bytes, and the workspace live after it) to that request. It fails if
// the dry backend allocates anything its request does not say, or if a request changes
// without the dry backend following. No GPU needed.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/meta_communicator.h"
#include "core/config/config_loader.h"
#include "core/device/meta_device.h"
#include "nn/kernels/cuda_workspace.h"
#include "nn/kernels/kernel_backend.h"
#include "nn/loss/loss.h"
#include "optim/optimizer.h"
#include "runtime/engine/block_pass.h"
#include "runtime/engine/model_factory.h"
#include "sharding/zero_strategy.h"
#include "support/test_paths.h"

namespace zt::nn::cuda {
namespace {

constexpr std::size_t kMaxEventsPerOp = 1 << 12;

// "+name bytes (live L)" for an allocation, "-bytes (live L)" for a free; L is the workspace
// live after it, counted from the op's start.
std::string allocated(const std::string& name, std::int64_t bytes, std::int64_t live) {
  return "+" + name + " " + std::to_string(bytes) + " (live " + std::to_string(live) + ")";
}
std::string freed(std::int64_t bytes, std::int64_t live) {
  return "-" + std::to_string(bytes) + " (live " + std::to_string(live) + ")";
}

// What the request says the op does: its entries in order, a transient one freed before the
// next, the op-long ones freed at the end, last made first (replay_workspace's order).
std::vector<std::string> expected_trace(const WorkspaceRequest& request) {
  std::vector<std::string> trace;
  std::int64_t live = 0;
  std::vector<std::int64_t> op_long;
  for (const WorkspaceEntry& entry : request) {
    EXPECT_EQ(entry.category, MemoryCategory::kWorkspace) << entry.name();
    live += entry.bytes;
    trace.push_back(allocated(entry.name(), entry.bytes, live));
    if (entry.lifetime == WorkspaceLifetime::kTransient) {
      live -= entry.bytes;
      trace.push_back(freed(entry.bytes, live));
    } else {
      op_long.push_back(entry.bytes);
    }
  }
  for (auto it = op_long.rbegin(); it != op_long.rend(); ++it) {
    live -= *it;
    trace.push_back(freed(*it, live));
  }
  return trace;
}

// What the op did: the tracker's workspace events while it ran.
std::vector<std::string> actual_trace(const std::vector<MemoryEvent>& events) {
  std::vector<std::string> trace;
  std::int64_t start = -1;
  for (const MemoryEvent& e : events) {
    if (e.category != MemoryCategory::kWorkspace) continue;
    if (start < 0) start = e.category_bytes - e.delta_bytes;
    const std::int64_t live = e.category_bytes - start;
    trace.push_back(e.delta_bytes > 0 ? allocated(e.name, e.delta_bytes, live)
                                      : freed(-e.delta_bytes, live));
  }
  return trace;
}

// Forwards every op to the dry backend and checks its workspace against the op's request.
class RequestCheckingKernels final : public KernelBackend {
 public:
  RequestCheckingKernels(const KernelBackend& dry, CudaAttention attention)
      : dry_(dry), attention_(attention) {}

  int ops() const { return ops_; }
  int attention_ops() const { return attention_ops_; }
  std::int64_t allocations() const { return allocations_; }

  const Device& device() const override { return dry_.device(); }

  void gemm(DeviceContext& d, bool ta, bool tb, float alpha, const Tensor& a, const Tensor& b,
            float beta, const Tensor& c) const override {
    check(d, "gemm", gemm_workspace_request(), [&] { dry_.gemm(d, ta, tb, alpha, a, b, beta, c); });
  }
  void linear_forward(DeviceContext& d, const Tensor& x, const Tensor& w, const Tensor& b,
                      const Tensor& y, const Tensor& pre_gelu) const override {
    check(d, "linear_forward", linear_forward_workspace_request(),
          [&] { dry_.linear_forward(d, x, w, b, y, pre_gelu); });
  }
  void linear_backward(DeviceContext& d, const Tensor& x, const Tensor& w, const Tensor& dy,
                       const Tensor& dx, const Tensor& dw, const Tensor& db,
                       const Tensor& x_pre_gelu, const Tensor& x_pre_gelu_dbias) const override {
    check(d, "linear_backward",
          linear_backward_workspace_request(w, db, x_pre_gelu, x_pre_gelu_dbias),
          [&] { dry_.linear_backward(d, x, w, dy, dx, dw, db, x_pre_gelu, x_pre_gelu_dbias); });
  }
  void gelu_forward(DeviceContext& d, const Tensor& x, const Tensor& y) const override {
    check(d, "gelu_forward", {}, [&] { dry_.gelu_forward(d, x, y); });
  }
  void gelu_backward(DeviceContext& d, const Tensor& x, const Tensor& dy,
                     const Tensor& dx) const override {
    check(d, "gelu_backward", {}, [&] { dry_.gelu_backward(d, x, dy, dx); });
  }
  void relu_forward(DeviceContext& d, const Tensor& x, const Tensor& y) const override {
    check(d, "relu_forward", {}, [&] { dry_.relu_forward(d, x, y); });
  }
  void relu_backward(DeviceContext& d, const Tensor& x, const Tensor& dy,
                     const Tensor& dx) const override {
    check(d, "relu_backward", {}, [&] { dry_.relu_backward(d, x, dy, dx); });
  }
  void add(DeviceContext& d, const Tensor& a, const Tensor& b, const Tensor& out) const override {
    check(d, "add", {}, [&] { dry_.add(d, a, b, out); });
  }
  void dropout(DeviceContext& d, const math::DropoutMask& mask, const Tensor& x,
               const Tensor& y) const override {
    check(d, "dropout", {}, [&] { dry_.dropout(d, mask, x, y); });
  }
  void layer_norm_forward(DeviceContext& d, const Tensor& x, const Tensor& w, const Tensor& b,
                          float eps, const Tensor& y, const Tensor& mean,
                          const Tensor& rstd) const override {
    check(d, "layer_norm_forward", {},
          [&] { dry_.layer_norm_forward(d, x, w, b, eps, y, mean, rstd); });
  }
  void layer_norm_backward(DeviceContext& d, const Tensor& x, const Tensor& w, const Tensor& mean,
                           const Tensor& rstd, const Tensor& dy, const Tensor& dx, const Tensor& dw,
                           const Tensor& db) const override {
    check(d, "layer_norm_backward", {},
          [&] { dry_.layer_norm_backward(d, x, w, mean, rstd, dy, dx, dw, db); });
  }
  void rms_norm_forward(DeviceContext& d, const Tensor& x, const Tensor& w, float eps,
                        const Tensor& y, const Tensor& rstd) const override {
    check(d, "rms_norm_forward", {}, [&] { dry_.rms_norm_forward(d, x, w, eps, y, rstd); });
  }
  void rms_norm_backward(DeviceContext& d, const Tensor& x, const Tensor& w, const Tensor& rstd,
                         const Tensor& dy, const Tensor& dx, const Tensor& dw) const override {
    check(d, "rms_norm_backward", {}, [&] { dry_.rms_norm_backward(d, x, w, rstd, dy, dx, dw); });
  }
  void rope_forward(DeviceContext& d, const AttentionHeads& heads, std::int64_t start,
                    float theta) const override {
    check(d, "rope_forward", {}, [&] { dry_.rope_forward(d, heads, start, theta); });
  }
  void rope_backward(DeviceContext& d, const AttentionHeads& d_heads, std::int64_t start,
                     float theta) const override {
    check(d, "rope_backward", {}, [&] { dry_.rope_backward(d, d_heads, start, theta); });
  }
  void swiglu_forward(DeviceContext& d, const Tensor& gate_up, const Tensor& h) const override {
    check(d, "swiglu_forward", {}, [&] { dry_.swiglu_forward(d, gate_up, h); });
  }
  void swiglu_backward(DeviceContext& d, const Tensor& gate_up, const Tensor& dh,
                       const Tensor& d_gate_up) const override {
    check(d, "swiglu_backward", {}, [&] { dry_.swiglu_backward(d, gate_up, dh, d_gate_up); });
  }
  void attention_forward(DeviceContext& d, const AttentionHeads& q, const AttentionHeads& k,
                         const AttentionHeads& v, const AttentionHeads& o, const Tensor& lse,
                         const math::DropoutMask* probs_dropout) const override {
    ++attention_ops_;
    check(d, "attention_forward",
          attention_forward_workspace_request(path_of(q, k, probs_dropout), q, k, v, o),
          [&] { dry_.attention_forward(d, q, k, v, o, lse, probs_dropout); });
  }
  void attention_backward(DeviceContext& d, const AttentionHeads& q, const AttentionHeads& k,
                          const AttentionHeads& v, const AttentionHeads& o, const Tensor& lse,
                          const AttentionHeads& d_o, const AttentionHeads& dq,
                          const AttentionHeads& dk, const AttentionHeads& dv,
                          const math::DropoutMask* probs_dropout) const override {
    ++attention_ops_;
    check(d, "attention_backward",
          attention_backward_workspace_request(path_of(q, k, probs_dropout), q, k, v, o, d_o, dq,
                                               dk, dv),
          [&] { dry_.attention_backward(d, q, k, v, o, lse, d_o, dq, dk, dv, probs_dropout); });
  }
  // Dropout on the probabilities runs the rows kernels whatever the attention setting.
  AttentionPath path_of(const AttentionHeads& q, const AttentionHeads& k,
                        const math::DropoutMask* probs_dropout) const {
    return probs_dropout != nullptr ? AttentionPath::kRows : attention_path(attention_, q, k);
  }
  void embedding_forward(DeviceContext& d, const Tensor& ids, const Tensor& wte, const Tensor& wpe,
                         const Tensor& out) const override {
    check(d, "embedding_forward", {}, [&] { dry_.embedding_forward(d, ids, wte, wpe, out); });
  }
  void embedding_backward(DeviceContext& d, const Tensor& ids, const Tensor& dout,
                          const Tensor& dwte, const Tensor& dwpe) const override {
    check(d, "embedding_backward", {}, [&] { dry_.embedding_backward(d, ids, dout, dwte, dwpe); });
  }
  void softmax_cross_entropy(DeviceContext& d, const Tensor& logits, const Tensor& targets,
                             std::int64_t classes, float grad_scale, const Tensor& dlogits,
                             double* loss_sum) const override {
    const std::int64_t columns = logits.dim(logits.rank() - 1);
    check(d, "softmax_cross_entropy", cross_entropy_workspace_request(logits.numel() / columns),
          [&] {
            dry_.softmax_cross_entropy(d, logits, targets, classes, grad_scale, dlogits, loss_sum);
          });
  }
  // Token selection allocates nothing on the device (a block's shared memory only).
  void select_tokens(DeviceContext& d, const Tensor& logits, std::int64_t classes,
                     const math::TokenSampling& sampling, const Tensor& ids) const override {
    check(d, "select_tokens", WorkspaceRequest{},
          [&] { dry_.select_tokens(d, logits, classes, sampling, ids); });
  }

  void quantize_blocks(DeviceContext& d, const math::BlockQuantFormat& format, const Tensor& x,
                       const Tensor& payload, const Tensor& scales) const override {
    check(d, "quantize_blocks", {}, [&] { dry_.quantize_blocks(d, format, x, payload, scales); });
  }
  void dequantize_blocks(DeviceContext& d, const math::BlockQuantFormat& format,
                         const Tensor& payload, const Tensor& scales,
                         const Tensor& y) const override {
    check(d, "dequantize_blocks", {},
          [&] { dry_.dequantize_blocks(d, format, payload, scales, y); });
  }

 private:
  void check(DeviceContext& d, const char* op, const WorkspaceRequest& request,
             const std::function<void()>& run) const {
    MemoryTracker& tracker = d.tracker();
    tracker.start_timeline(kMaxEventsPerOp);
    run();
    const std::vector<MemoryEvent> events = tracker.timeline();
    ASSERT_FALSE(tracker.timeline_truncated()) << op;
    tracker.stop_timeline();
    ++ops_;
    allocations_ += static_cast<std::int64_t>(request.size());
    EXPECT_EQ(actual_trace(events), expected_trace(request)) << "op " << ops_ << ": " << op;
  }

  const KernelBackend& dry_;
  CudaAttention attention_;
  mutable int ops_ = 0;
  mutable int attention_ops_ = 0;
  mutable std::int64_t allocations_ = 0;
};

struct StepCounts {
  int ops = 0;
  int attention_ops = 0;
  std::int64_t allocations = 0;
};

// One training step of `config_file` with `overrides` on a meta GPU, as the trainer runs it
// (forward, loss, backward, optimizer step), with every kernel op checked.
StepCounts checked_step(const std::string& config_file, std::vector<std::string> overrides,
                        CudaAttention attention) {
  overrides.push_back("runtime.device=cuda");
  const Config config =
      load_config_file(testing::source_dir() + "/configs/" + config_file, overrides);
  const std::unique_ptr<DeviceContext> device = make_meta_device_context(Device::cuda(0));
  comm::MetaCommunicator control(0, 1, nullptr), parameters(0, 1, nullptr),
      gradients(0, 1, nullptr);
  Model model = engine::make_model(config);
  const std::unique_ptr<optim::Optimizer> optimizer = optim::make_optimizer(config.optimizer);
  const std::unique_ptr<zero::ZeroStrategy> strategy = zero::make_zero_strategy(
      {model, config, {control, parameters, gradients}, *device, *optimizer});
  const RequestCheckingKernels kernels(kernel_backend_for(device->device(), attention), attention);
  engine::BlockPass pass(model, *strategy, *device, kernels, config.activation_checkpointing);

  const Shape tokens{config.train.micro_batch_size, config.model.seq_len};
  const Tensor ids =
      Tensor::zeros(tokens, DType::kI32, device->tracker(), MemoryCategory::kActivations);
  const Tensor targets =
      Tensor::zeros(tokens, DType::kI32, device->tracker(), MemoryCategory::kActivations);
  strategy->zero_gradients();
  const Tensor output = pass.forward(ids);
  LossContext loss_context{*device, kernels};
  LossResult loss = make_softmax_cross_entropy_loss()->compute(
      output, targets, 1.0f / static_cast<float>(tokens.numel()), loss_context);
  pass.backward(std::move(loss.grad_logits), true);
  strategy->finish_gradients();
  strategy->optimizer_step(1, config.optimizer.lr);
  return {kernels.ops(), kernels.attention_ops(), kernels.allocations()};
}

// Forward and backward of every layer's attention (and a checkpointed block's recomputed
// forward), and the ops around them, were checked.
void expect_whole_step(const StepCounts& counts, std::int64_t layers) {
  EXPECT_GE(counts.attention_ops, 2 * layers);  // more with checkpointing (recomputed)
  EXPECT_GT(counts.ops, 10 * layers);
  EXPECT_GT(counts.allocations, 4 * layers);
}

TEST(CudaWorkspaceRequests, GptSmallStepAllocatesWhatTheRequestsSayOnRows) {
  for (const char* dtype : {"bf16", "fp32"}) {
    SCOPED_TRACE(dtype);
    expect_whole_step(
        checked_step("gpt-small.toml",
                     {std::string("precision.dtype=") + dtype, "train.micro_batch_size=8"},
                     CudaAttention::kRows),
        12);
  }
}

TEST(CudaWorkspaceRequests, GptSmallStepAllocatesWhatTheRequestsSayOnCudnn) {
  expect_whole_step(
      checked_step("gpt-small.toml", {"precision.dtype=bf16", "train.micro_batch_size=8"},
                   CudaAttention::kCudnn),
      12);
}

TEST(CudaWorkspaceRequests, LlamaStepAllocatesWhatTheRequestsSay) {
  for (const CudaAttention attention : {CudaAttention::kRows, CudaAttention::kCudnn}) {
    for (const char* dtype : {"bf16", "fp32"}) {
      SCOPED_TRACE(std::string(dtype) +
                   (attention == CudaAttention::kCudnn ? ", cudnn" : ", rows"));
      expect_whole_step(
          checked_step("llama-tiny.toml", {std::string("precision.dtype=") + dtype}, attention), 2);
    }
  }
}

}  // namespace
}  // namespace zt::nn::cuda
