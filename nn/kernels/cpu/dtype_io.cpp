// Widening loads, rounding stores and the tracked f32 scratch of dtype_io.h.
#include "nn/kernels/cpu/dtype_io.h"

namespace zt::nn::cpu {
namespace {

void check_range(const Tensor& tensor, std::int64_t offset, std::int64_t count) {
  ZT_CHECK(offset >= 0 && count >= 0 && offset + count <= tensor.numel(),
           "elements [" + std::to_string(offset) + ", " + std::to_string(offset + count) +
               ") outside a tensor of " + std::to_string(tensor.numel()));
}

}  // namespace

void load_f32(const Tensor& src, std::int64_t offset, std::int64_t count, float* dst) {
  check_range(src, offset, count);
  if (src.device().meta) return;  // no values (Note [Dry kernels])
  dispatch_floating(src.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* values = src.data_as<T>() + offset;
    parallel_for(count, kParallelGrainElements, [&](std::int64_t begin, std::int64_t end) {
      widen_into(values + begin, dst + begin, end - begin);
    });
  });
}

void store_from_f32(const float* src, const Tensor& dst, std::int64_t offset, std::int64_t count) {
  check_range(dst, offset, count);
  if (dst.device().meta) return;
  dispatch_floating(dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* values = dst.data_as<T>() + offset;
    if (static_cast<const void*>(values) == static_cast<const void*>(src)) return;
    parallel_for(count, kParallelGrainElements, [&](std::int64_t begin, std::int64_t end) {
      round_into(src + begin, values + begin, end - begin);
    });
  });
}

Tensor to_f32_scratch(const Tensor& tensor, MemoryTracker& tracker) {
  if (tensor.dtype() == DType::kF32) return tensor;
  // Uninitialized: load_f32 writes every element before anything reads one.
  Tensor scratch = Tensor::empty(tensor.shape(), DType::kF32, tracker, MemoryCategory::kWorkspace);
  load_f32(tensor, 0, tensor.numel(), scratch.data_as<float>());
  return scratch;
}

F32Output::F32Output(const Tensor& dst, MemoryTracker& tracker)
    : dst_(dst),
      f32_(dst.dtype() == DType::kF32
               ? dst
               : Tensor::empty(dst.shape(), DType::kF32, tracker, MemoryCategory::kWorkspace)) {
  ZT_CHECK(is_floating(dst.dtype()), "an f32 output for an i32 tensor");
}

F32Rows::F32Rows(const Tensor& tensor, std::int64_t row_elements, MemoryTracker& tracker,
                 std::int64_t chunks)
    : tensor_(tensor), row_elements_(row_elements) {
  ZT_CHECK(chunks >= 1, "f32 rows for " + std::to_string(chunks) + " chunks");
  ZT_CHECK(is_floating(tensor.dtype()), "f32 rows of an i32 tensor");
  ZT_CHECK(row_elements > 0 ? tensor.numel() % row_elements == 0 : tensor.numel() == 0,
           "a tensor of " + std::to_string(tensor.numel()) + " elements split into rows of " +
               std::to_string(row_elements));
  if (tensor.dtype() != DType::kF32) {
    // Uninitialized: a chunk's row is reused for every row of that chunk, so load() and the
    // math behind out() already write all of it before reading (or a second row would see
    // the first's values); zeros would never be read.
    scratch_ = Tensor::empty(Shape{chunks, row_elements}, DType::kF32, tracker,
                             MemoryCategory::kWorkspace);
  }
}

float* F32Rows::scratch_row(std::int64_t chunk) const {
  ZT_CHECK(chunk >= 0 && chunk < scratch_.dim(0),
           "f32 rows: chunk " + std::to_string(chunk) + " of " + std::to_string(scratch_.dim(0)));
  return scratch_.data_as<float>() + chunk * row_elements_;
}

const float* F32Rows::load(std::int64_t row, std::int64_t chunk) const {
  if (!scratch_.defined()) return tensor_.data_as<float>() + row * row_elements_;
  float* scratch = scratch_row(chunk);
  load_f32(tensor_, row * row_elements_, row_elements_, scratch);
  return scratch;
}

float* F32Rows::out(std::int64_t row, std::int64_t chunk) const {
  if (!scratch_.defined()) return tensor_.data_as<float>() + row * row_elements_;
  return scratch_row(chunk);
}

void F32Rows::store(std::int64_t row, std::int64_t chunk) const {
  if (!scratch_.defined()) return;
  store_from_f32(scratch_row(chunk), tensor_, row * row_elements_, row_elements_);
}

}  // namespace zt::nn::cpu
