// Tensor: a contiguous view (offset, shape, dtype) into shared flat storage on a device.
// Views are cheap and share the storage; the storage is freed with its last view.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "core/device.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/memory_tracker.h"
#include "core/shape.h"

namespace zt {

class Tensor {
 public:
  Tensor() = default;
  Tensor(const Tensor&) = default;
  Tensor& operator=(const Tensor&) = default;
  // A moved-from tensor is undefined (not a view of storage it no longer keeps alive).
  Tensor(Tensor&& other) noexcept { *this = std::move(other); }
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) {
      storage_ = std::move(other.storage_);
      base_ = std::exchange(other.base_, nullptr);
      offset_elements_ = std::exchange(other.offset_elements_, 0);
      shape_ = other.shape_;
      dtype_ = other.dtype_;
      device_ = other.device_;
      other.shape_ = Shape();
    }
    return *this;
  }

  // New zero-filled storage from `tracker`, counted under `category`.
  static Tensor zeros(const Shape& shape, DType dtype, MemoryTracker& tracker,
                      MemoryCategory category);
  // New storage whose contents are undefined until written: for outputs the math overwrites.
  static Tensor empty(const Shape& shape, DType dtype, MemoryTracker& tracker,
                      MemoryCategory category);
  // A non-owning tensor over memory the caller keeps alive (host buffers in tests, library
  // memory). Nothing is tracked for it.
  static Tensor wrap(void* data, const Shape& shape, DType dtype, Device device = Device::cpu());

  bool defined() const { return base_ != nullptr; }
  const Shape& shape() const { return shape_; }
  std::int64_t dim(int axis) const { return shape_[axis]; }
  int rank() const { return shape_.rank(); }
  std::int64_t numel() const { return shape_.numel(); }
  DType dtype() const { return dtype_; }
  const Device& device() const { return device_; }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }

  void* data() const {
    return static_cast<char*>(base_) +
           offset_elements_ * static_cast<std::int64_t>(dtype_size(dtype_));
  }
  template <typename T>
  T* data_as() const {
    ZT_CHECK(dtype_of<T>() == dtype_, "tensor of dtype " + std::string(dtype_name(dtype_)) +
                                          " read as " + std::string(dtype_name(dtype_of<T>())));
    return static_cast<T*>(data());
  }
  template <typename T>
  std::span<T> span() const {
    return {data_as<T>(), static_cast<std::size_t>(numel())};
  }

  // `shape.numel()` elements starting `offset_elements` into this tensor.
  Tensor view(std::int64_t offset_elements, const Shape& shape) const;
  // The same elements with another shape of equal element count.
  Tensor reshape(const Shape& shape) const;
  // Rows [begin, end) along axis 0.
  Tensor slice_rows(std::int64_t begin, std::int64_t end) const;

 private:
  std::shared_ptr<Allocation> storage_;  // null for wrapped tensors
  void* base_ = nullptr;
  std::int64_t offset_elements_ = 0;
  Shape shape_;
  DType dtype_ = DType::kF32;
  Device device_;

  static Tensor allocate(const Shape& shape, DType dtype, MemoryTracker& tracker,
                         MemoryCategory category, Fill fill);
};

}  // namespace zt
