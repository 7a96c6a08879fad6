// Elementwise work on gradient buffers of any floating dtype (f32, bf16, f16), always in
// fp32 arithmetic: what the strategies need to keep standing gradients in a narrower dtype
// than the fp32 each block's backward writes.
#pragma once

#include <span>

#include "core/tensor.h"

namespace zt::zero {

// Σ x², accumulated in double.
double sum_of_squares(const Tensor& values);
void scale_in_place(const Tensor& values, float factor);
// dst = (replace ? 0 : dst) + src, rounded once into dst's dtype. `src` is f32.
void add_into(const Tensor& src, const Tensor& dst, bool replace);
// out = values as f32 (out.size() == values.numel()).
void copy_to_f32(const Tensor& values, std::span<float> out);
void fill_zero_bytes(const Tensor& values);

}  // namespace zt::zero
