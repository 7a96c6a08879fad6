// How CPU kernels read and write f32/bf16/f16 tensors while computing in f32:
// values are widened to f32 on load and rounded (RNE) once on store. f32 tensors are used in
// place, so the f32 path computes exactly what it would without these helpers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/bf16_convert.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/memory_tracker.h"
#include "core/parallel_for.h"
#include "core/tensor.h"
#include "nn/dtype_contract.h"

namespace zt::nn::cpu {

// Calls fn(T{}) with T the storage type of `dtype` (float, BF16 or F16): the one point where
// a kernel goes from a runtime dtype to a typed loop.
template <typename Fn>
decltype(auto) dispatch_floating(DType dtype, Fn&& fn) {
  ZT_CHECK(is_floating(dtype), "a floating-point kernel was given an i32 tensor");
  if (dtype == DType::kBF16) return fn(BF16{});
  if (dtype == DType::kF16) return fn(F16{});
  return fn(float{});
}

// dst[i] = f32(src[i]) and dst[i] = round(src[i]) for i < count, on one thread: bf16 on the
// CPU's widest vector path (Note [bf16 conversion paths]), with the scalar conversion's bits.
template <typename T>
void widen_into(const T* src, float* dst, std::int64_t count) {
  if constexpr (std::is_same_v<T, BF16>) {
    bf16_to_f32(src, dst, static_cast<std::size_t>(count));
  } else {
    for (std::int64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(src[i]);
  }
}
template <typename T>
void round_into(const float* src, T* dst, std::int64_t count) {
  if constexpr (std::is_same_v<T, BF16>) {
    f32_to_bf16(src, dst, static_cast<std::size_t>(count));
  } else {
    for (std::int64_t i = 0; i < count; ++i) dst[i] = T(src[i]);
  }
}

// Elements an element-wise loop over bf16/f16 widens at a time (on the stack).
inline constexpr std::int64_t kWidenBlockElements = 256;

// y = round(fn(f32(x))) element-wise over tensors of one floating dtype and size, in parallel,
// where fn(in, out, count) is an f32 vector loop (out may alias in): f32 tensors go to fn in
// place, bf16/f16 are widened kWidenBlockElements at a time and rounded once.
template <typename Fn>
void map_f32_blocks(const Tensor& x, const Tensor& y, Fn fn) {
  dispatch_floating(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xs = x.data_as<T>();
    T* ys = y.data_as<T>();
    parallel_for(x.numel(), kParallelGrainElements, [&](std::int64_t begin, std::int64_t end) {
      if constexpr (std::is_same_v<T, float>) {
        fn(xs + begin, ys + begin, end - begin);
      } else {
        float block[kWidenBlockElements];
        for (std::int64_t start = begin; start < end; start += kWidenBlockElements) {
          const std::int64_t count = std::min(kWidenBlockElements, end - start);
          widen_into(xs + start, block, count);
          fn(block, block, count);
          round_into(block, ys + start, count);
        }
      }
    });
  });
}

// out = round(fn(f32(a), f32(b))) likewise, fn(a, b, out, count) an f32 vector loop (out may
// alias a or b).
template <typename Fn>
void zip_f32_blocks(const Tensor& a, const Tensor& b, const Tensor& out, Fn fn) {
  dispatch_floating(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* as = a.data_as<T>();
    const T* bs = b.data_as<T>();
    T* outs = out.data_as<T>();
    parallel_for(a.numel(), kParallelGrainElements, [&](std::int64_t begin, std::int64_t end) {
      if constexpr (std::is_same_v<T, float>) {
        fn(as + begin, bs + begin, outs + begin, end - begin);
      } else {
        float a_block[kWidenBlockElements];
        float b_block[kWidenBlockElements];
        for (std::int64_t start = begin; start < end; start += kWidenBlockElements) {
          const std::int64_t count = std::min(kWidenBlockElements, end - start);
          widen_into(as + start, a_block, count);
          widen_into(bs + start, b_block, count);
          fn(a_block, b_block, a_block, count);
          round_into(a_block, outs + start, count);
        }
      }
    });
  });
}

// dst[i] = f32(src[offset + i]) for i < count.
void load_f32(const Tensor& src, std::int64_t offset, std::int64_t count, float* dst);
// dst[offset + i] = round(src[i]) for i < count; a no-op when src already is that memory.
void store_from_f32(const float* src, const Tensor& dst, std::int64_t offset, std::int64_t count);

// The tensor itself when it is f32, else an f32 copy in tracked workspace
// (MemoryCategory::kWorkspace) that is freed with the returned tensor: GEMM operands.
Tensor to_f32_scratch(const Tensor& tensor, MemoryTracker& tracker);

// Where to compute, in f32, a result that belongs in `dst`: dst itself when it is f32, else
// tracked workspace that store() rounds into dst once. The workspace is not zeroed: callers
// write all of it first (a GEMM with beta 0, or dst widened into it when beta reads it).
class F32Output {
 public:
  F32Output(const Tensor& dst, MemoryTracker& tracker);
  float* data() const { return f32_.data_as<float>(); }
  void store() const { store_from_f32(data(), dst_, 0, dst_.numel()); }

 private:
  Tensor dst_;
  Tensor f32_;  // dst_ itself, or workspace of the same shape
};

// Row-at-a-time f32 access to a tensor of `row_elements`-long rows, for row kernels (softmax,
// layer norm, embedding lookups) that must not widen a whole tensor: f32 rows are used in
// place; bf16/f16 rows go through one f32 row of tracked workspace per chunk of a
// parallel_for (`chunks` of them, Note [Chunks fixed by size]). One row at a time per chunk:
// a pointer from load() or out() is valid until that chunk's next call.
class F32Rows {
 public:
  F32Rows(const Tensor& tensor, std::int64_t row_elements, MemoryTracker& tracker,
          std::int64_t chunks = 1);

  const float* load(std::int64_t row, std::int64_t chunk = 0) const;
  // The f32 row to compute row `row` into; store(row) then rounds it into the tensor.
  float* out(std::int64_t row, std::int64_t chunk = 0) const;
  void store(std::int64_t row, std::int64_t chunk = 0) const;

 private:
  float* scratch_row(std::int64_t chunk) const;

  Tensor tensor_;
  std::int64_t row_elements_;
  Tensor scratch_;  // (chunks, row_elements) f32 workspace; undefined when tensor_ is f32
};

// out[i] = round(fn(f32(x[i]))); x and out have the same dtype and size. Element-wise loops
// run on parallel_for's threads (chunks of kParallelGrainElements).
template <typename Fn>
void map_elements(const Tensor& x, const Tensor& out, Fn fn) {
  expect_dtype(out, x.dtype(), "map_elements output");
  ZT_CHECK(out.numel() == x.numel(), "map_elements over tensors of different sizes");
  dispatch_floating(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xs = x.data_as<T>();
    T* ys = out.data_as<T>();
    parallel_for(x.numel(), kParallelGrainElements, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) ys[i] = T(fn(static_cast<float>(xs[i])));
    });
  });
}

// out[i] = round(fn(f32(a[i]), f32(b[i]))); a, b and out have the same dtype and size.
template <typename Fn>
void zip_elements(const Tensor& a, const Tensor& b, const Tensor& out, Fn fn) {
  expect_dtype(b, a.dtype(), "zip_elements second operand");
  expect_dtype(out, a.dtype(), "zip_elements output");
  ZT_CHECK(b.numel() == a.numel() && out.numel() == a.numel(),
           "zip_elements over tensors of different sizes");
  dispatch_floating(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* as = a.data_as<T>();
    const T* bs = b.data_as<T>();
    T* ys = out.data_as<T>();
    parallel_for(a.numel(), kParallelGrainElements, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        ys[i] = T(fn(static_cast<float>(as[i]), static_cast<float>(bs[i])));
      }
    });
  });
}

}  // namespace zt::nn::cpu
