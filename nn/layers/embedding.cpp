// Embedding forward/backward: loops over positions calling the per-row math shared with CUDA.
// Forward validates every id before writing, and saves the ids for backward's scatter-add.
// The compute dtype is the parameters' (the input is i32 ids); rows are summed in f32 and
// the scatter-add accumulates into the f32 gradients.
#include "nn/layers/embedding.h"

#include <string>

#include "core/error.h"
#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/math/embedding_math.h"

namespace zt::nn {

Embedding::Embedding(std::int64_t vocab_size, std::int64_t max_seq_len, std::int64_t channels)
    : vocab_size_(vocab_size), max_seq_len_(max_seq_len), channels_(channels) {
  ZT_CHECK(vocab_size_ > 0 && max_seq_len_ > 0 && channels_ > 0,
           "Embedding needs positive vocab_size, max_seq_len and channels");
}

std::vector<ParameterSpec> Embedding::parameter_specs() const {
  return {{"wte", Shape{vocab_size_, channels_}, Init::normal(0.02f)},
          {"wpe", Shape{max_seq_len_, channels_}, Init::normal(0.02f)}};
}

namespace {

// Token ids are user data (a token file, a tokenizer with another vocabulary): a bad one is
// a FormatError naming where it is, not an internal error.
void check_token_ids(const std::int32_t* ids, std::int64_t count, std::int64_t seq_len,
                     std::int64_t vocab_size) {
  for (std::int64_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_size) {
      throw FormatError("token id " + std::to_string(ids[i]) + " at batch row " +
                        std::to_string(i / seq_len) + ", position " + std::to_string(i % seq_len) +
                        " is outside the vocabulary [0, " + std::to_string(vocab_size) +
                        ") of model.vocab_size = " + std::to_string(vocab_size) +
                        "; check that the data was tokenized with this vocabulary");
    }
  }
}

}  // namespace

// ids (B, T) -> out (B, T, C)
Tensor Embedding::forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) {
  ZT_CHECK(input.dtype() == DType::kI32 && input.rank() == 2,
           "Embedding input must be (B, T) i32 token ids, got " + input.shape().to_string());
  const std::int64_t batch = input.dim(0);
  const std::int64_t seq_len = input.dim(1);
  ZT_CHECK(seq_len <= max_seq_len_, "sequence of " + std::to_string(seq_len) +
                                        " tokens is longer than max_seq_len " +
                                        std::to_string(max_seq_len_));
  const std::int32_t* ids = input.data_as<std::int32_t>();
  check_token_ids(ids, input.numel(), seq_len, vocab_size_);
  ZT_CHECK(params.size() == 2, "Embedding given the wrong number of parameters");
  const DType compute = params[0].dtype();
  cpu::expect_dtype(params[1], compute, "Embedding wpe");
  Tensor output = Tensor::zeros(Shape{batch, seq_len, channels_}, compute, ctx.tracker,
                                MemoryCategory::kActivations);
  const cpu::F32Rows wte(params[0], channels_, ctx.tracker);
  const cpu::F32Rows wpe(params[1], channels_, ctx.tracker);
  const cpu::F32Rows out(output, channels_, ctx.tracker);
  for (std::int64_t i = 0; i < input.numel(); ++i) {
    math::embedding_forward_row(wte.load(ids[i]), wpe.load(i % seq_len), channels_, out.out(i));
    out.store(i);
  }
  ctx.saved.push(input);
  return output;
}

// dout (B, T, C) -> dwte (V, C) and dwpe (maxT, C) accumulated at the rows forward read.
Tensor Embedding::backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                           ModuleContext& ctx) {
  const Tensor input = ctx.saved.pop();
  cpu::expect_dtype(grad_output, params[0].dtype(), "Embedding grad_output");
  const std::int64_t seq_len = input.dim(1);
  const std::int32_t* ids = input.data_as<std::int32_t>();
  const cpu::F32Rows dout(grad_output, channels_, ctx.tracker);
  float* dwte = grads[0].data_as<float>();
  float* dwpe = grads[1].data_as<float>();
  for (std::int64_t i = 0; i < input.numel(); ++i) {
    math::embedding_backward_row(dout.load(i), channels_, dwte + ids[i] * channels_,
                                 dwpe + (i % seq_len) * channels_);
  }
  return Tensor();
}

}  // namespace zt::nn
