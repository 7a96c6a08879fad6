// The operands of the Llama block's kernel ops (rms_norm, rope, swiglu), checked once per
// call by every backend (CPU, CUDA and the CUDA dry run) before anything is read or written.
// A wrong shape or dtype here is the calling layer's bug (ZT_CHECK). Host code only.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/tensor.h"
#include "nn/dtype_contract.h"
#include "nn/kernels/attention_heads.h"

namespace zt::nn {

// A (rows, channels) view of an activation: rows is every leading axis flattened.
struct RowShape {
  std::int64_t rows;
  std::int64_t channels;
};

// x, y (N, C) in one floating dtype; weight (C) in that dtype; rstd (N) f32.
inline RowShape rms_norm_shape(const Tensor& x, const Tensor& weight, const Tensor& y,
                               const Tensor& rstd) {
  ZT_CHECK(x.defined() && is_floating(x.dtype()), "rms_norm: x is not a floating tensor");
  const std::int64_t channels = weight.numel();
  ZT_CHECK(x.rank() >= 1 && channels > 0 && x.dim(x.rank() - 1) == channels,
           "rms_norm: x " + x.shape().to_string() + " does not end in weight's " +
               std::to_string(channels) + " channels");
  expect_dtype(weight, x.dtype(), "rms_norm weight");
  expect_dtype(y, x.dtype(), "rms_norm y");
  ZT_CHECK(y.shape() == x.shape(),
           "rms_norm: y " + y.shape().to_string() + " is not x's shape " + x.shape().to_string());
  const std::int64_t rows = x.numel() / channels;
  expect_dtype(rstd, DType::kF32, "rms_norm rstd");
  ZT_CHECK(rstd.numel() == rows, "rms_norm: rstd has " + std::to_string(rstd.numel()) +
                                     " rows, x " + std::to_string(rows));
  return {rows, channels};
}

// rms_norm_shape's operands plus dy, dx (x's shape and dtype) and dweight (C) f32.
inline RowShape rms_norm_backward_shape(const Tensor& x, const Tensor& weight, const Tensor& rstd,
                                        const Tensor& dy, const Tensor& dx, const Tensor& dweight) {
  const RowShape shape = rms_norm_shape(x, weight, dx, rstd);
  expect_dtype(dy, x.dtype(), "rms_norm dy");
  ZT_CHECK(dy.shape() == x.shape(),
           "rms_norm: dy " + dy.shape().to_string() + " is not x's shape " + x.shape().to_string());
  expect_dtype(dweight, DType::kF32, "rms_norm dweight");
  ZT_CHECK(dweight.numel() == shape.channels, "rms_norm: dweight is not (C)");
  return shape;
}

// Heads to rotate in place: floating, an even head_dim, every element inside the base, and
// positions start_position .. start_position + T - 1 that an f32 holds exactly.
inline void check_rope_heads(const AttentionHeads& heads, std::int64_t start_position, float theta,
                             const char* name) {
  const std::string what = std::string("rope ") + name;
  ZT_CHECK(heads.base.defined() && is_floating(heads.base.dtype()),
           what + " is not a floating tensor");
  ZT_CHECK(heads.head_dim > 0 && heads.head_dim % 2 == 0,
           what + ": head_dim " + std::to_string(heads.head_dim) + " is not even");
  ZT_CHECK(theta > 0.0f, what + ": theta must be > 0");
  constexpr std::int64_t kExactF32Integers = std::int64_t{1} << 24;
  ZT_CHECK(start_position >= 0 && start_position + heads.seq_len <= kExactF32Integers,
           what + ": positions from " + std::to_string(start_position) + " outside [0, 2^24)");
  const AttentionShape shape{heads.batch,   heads.seq_len,  heads.n_heads,
                             heads.n_heads, heads.head_dim, heads.seq_len};
  check_attention_heads(heads, shape, heads.seq_len, heads.n_heads, what.c_str());
}

// gate_up (N, 2F) and h (N, F) in one floating dtype; returns (N, F).
inline RowShape swiglu_shape(const Tensor& gate_up, const Tensor& h) {
  ZT_CHECK(gate_up.defined() && is_floating(gate_up.dtype()),
           "swiglu: gate_up is not a floating tensor");
  expect_dtype(h, gate_up.dtype(), "swiglu h");
  const int last = gate_up.rank() - 1;
  ZT_CHECK(gate_up.rank() >= 1 && h.rank() == gate_up.rank() && gate_up.dim(last) > 0 &&
               gate_up.shape() == h.shape().with_extent(last, 2 * h.dim(last)),
           "swiglu: gate_up " + gate_up.shape().to_string() + " is not (N, 2F) of h " +
               h.shape().to_string());
  return {h.numel() / h.dim(last), h.dim(last)};
}

// swiglu_shape's operands plus d_gate_up (gate_up's shape and dtype; it may be gate_up).
inline RowShape swiglu_backward_shape(const Tensor& gate_up, const Tensor& dh,
                                      const Tensor& d_gate_up) {
  const RowShape shape = swiglu_shape(gate_up, dh);
  expect_dtype(d_gate_up, gate_up.dtype(), "swiglu d_gate_up");
  ZT_CHECK(d_gate_up.shape() == gate_up.shape(),
           "swiglu: d_gate_up " + d_gate_up.shape().to_string() + " is not gate_up's shape");
  return shape;
}

}  // namespace zt::nn
