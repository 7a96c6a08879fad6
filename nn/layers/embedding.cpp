// Embedding forward/backward on the kernel backend. Forward has every id validated before
// anything is written, and saves the ids for backward's scatter-add.
// The compute dtype is the parameters' (the input is i32 ids); rows are summed in f32 and
// the scatter-add accumulates into the f32 gradients.
#include "nn/layers/embedding.h"

#include <string>

#include "core/error.h"
#include "nn/decode_state.h"
#include "nn/dtype_contract.h"
#include "nn/kernels/token_ids.h"

namespace zt::nn {

Embedding::Embedding(std::int64_t vocab_size, std::int64_t max_seq_len, std::int64_t channels,
                     PositionEmbedding positions)
    : vocab_size_(vocab_size),
      max_seq_len_(max_seq_len),
      channels_(channels),
      positions_(positions) {
  ZT_CHECK(vocab_size_ > 0 && max_seq_len_ > 0 && channels_ > 0,
           "Embedding needs positive vocab_size, max_seq_len and channels");
}

std::vector<ParameterSpec> Embedding::parameter_specs() const {
  std::vector<ParameterSpec> specs = {{"wte", Shape{vocab_size_, channels_}, Init::normal(0.02f)}};
  if (positions_ == PositionEmbedding::kLearned) {
    specs.push_back({"wpe", Shape{max_seq_len_, channels_}, Init::normal(0.02f)});
  }
  return specs;
}

void Embedding::check_input(const Tensor& input) const {
  if (input.dtype() != DType::kI32 || input.rank() != 2) return;  // forward names the shape
  // Only host ids can be read here (the estimator's meta batches hold none); ids a caller
  // put on a device are the caller's to have checked: the device kernel traps on a bad one.
  if (input.device().kind != DeviceKind::kCpu || input.device().meta) return;
  check_token_ids(input.data_as<std::int32_t>(), input.numel(), input.dim(1), vocab_size_);
}

// ids (B, T) -> out (B, T, C)
Tensor Embedding::forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) {
  ZT_CHECK(input.dtype() == DType::kI32 && input.rank() == 2,
           "Embedding input must be (B, T) i32 token ids, got " + input.shape().to_string());
  const std::int64_t batch = input.dim(0);
  const std::int64_t seq_len = input.dim(1);
  ZT_CHECK(seq_len <= max_seq_len_, "sequence of " + std::to_string(seq_len) +
                                        " tokens is longer than max_seq_len " +
                                        std::to_string(max_seq_len_));
  const bool learned = positions_ == PositionEmbedding::kLearned;
  ZT_CHECK(params.size() == (learned ? 2u : 1u), "Embedding given the wrong number of parameters");
  const DType compute = params[0].dtype();
  if (learned) expect_dtype(params[1], compute, "Embedding wpe");
  Tensor output = Tensor::empty(Shape{batch, seq_len, channels_}, compute, ctx.tracker(),
                                MemoryCategory::kActivations);
  if (ctx.decode != nullptr) {
    // Note [Decoding with a KV cache]: the tokens sit at absolute positions [position,
    // position + T), so they read those rows of wpe; nothing is kept for a backward.
    const std::int64_t position = ctx.decode->position();
    ZT_CHECK(position + seq_len <= max_seq_len_,
             "decoding past max_seq_len " + std::to_string(max_seq_len_));
    ctx.kernels.embedding_forward(
        ctx.device, input, params[0],
        learned ? params[1].slice_rows(position, position + seq_len) : Tensor(), output);
    return output;
  }
  ctx.kernels.embedding_forward(ctx.device, input, params[0], learned ? params[1] : Tensor(),
                                output);
  ctx.saved.push(input);
  return output;
}

// dout (B, T, C) -> dwte (V, C) and dwpe (maxT, C), if any, accumulated at the rows forward read.
Tensor Embedding::backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                           ModuleContext& ctx) {
  const Tensor input = ctx.saved.pop();
  expect_dtype(grad_output, params[0].dtype(), "Embedding grad_output");
  const bool learned = positions_ == PositionEmbedding::kLearned;
  ctx.kernels.embedding_backward(ctx.device, input, grad_output, grads[0],
                                 learned ? grads[1] : Tensor());
  return Tensor();
}

}  // namespace zt::nn
