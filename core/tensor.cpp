// Tensor allocation and views.
#include "core/tensor.h"

#include <string>

namespace zt {

Tensor Tensor::zeros(const Shape& shape, DType dtype, MemoryTracker& tracker,
                     MemoryCategory category) {
  return allocate(shape, dtype, tracker, category, Fill::kZero);
}

Tensor Tensor::empty(const Shape& shape, DType dtype, MemoryTracker& tracker,
                     MemoryCategory category) {
  return allocate(shape, dtype, tracker, category, Fill::kUninitialized);
}

Tensor Tensor::allocate(const Shape& shape, DType dtype, MemoryTracker& tracker,
                        MemoryCategory category, Fill fill) {
  const auto bytes =
      static_cast<std::int64_t>(static_cast<std::size_t>(shape.numel()) * dtype_size(dtype));
  Tensor tensor;
  tensor.storage_ = std::make_shared<Allocation>(tracker.allocate(bytes, category, fill));
  tensor.base_ = tensor.storage_->data();
  tensor.shape_ = shape;
  tensor.dtype_ = dtype;
  tensor.device_ = tracker.device();
  // A zero-byte allocation has no address; give the tensor an aligned, never-read one.
  if (tensor.base_ == nullptr) tensor.base_ = reinterpret_cast<void*>(MemoryTracker::kAlignment);
  return tensor;
}

Tensor Tensor::wrap(void* data, const Shape& shape, DType dtype, Device device) {
  ZT_CHECK(data != nullptr || shape.numel() == 0, "wrapping a null pointer");
  Tensor tensor;
  tensor.base_ = data != nullptr ? data : reinterpret_cast<void*>(MemoryTracker::kAlignment);
  tensor.shape_ = shape;
  tensor.dtype_ = dtype;
  tensor.device_ = device;
  return tensor;
}

Tensor Tensor::view(std::int64_t offset_elements, const Shape& shape) const {
  ZT_CHECK(defined(), "view of an undefined tensor");
  ZT_CHECK(offset_elements >= 0 && offset_elements + shape.numel() <= numel(),
           "view of " + std::to_string(shape.numel()) + " elements at offset " +
               std::to_string(offset_elements) + " exceeds a tensor of " + std::to_string(numel()));
  Tensor result = *this;
  result.offset_elements_ = offset_elements_ + offset_elements;
  result.shape_ = shape;
  return result;
}

Tensor Tensor::reshape(const Shape& shape) const {
  ZT_CHECK(shape.numel() == numel(),
           "reshape " + shape_.to_string() + " to " + shape.to_string() + " changes the size");
  return view(0, shape);
}

Tensor Tensor::slice_rows(std::int64_t begin, std::int64_t end) const {
  ZT_CHECK(rank() >= 1 && 0 <= begin && begin <= end && end <= dim(0), "row slice out of range");
  const std::int64_t row = dim(0) == 0 ? 0 : numel() / dim(0);
  return view(begin * row, shape_.with_extent(0, end - begin));
}

}  // namespace zt
