// fp32 arithmetic over f32/bf16/f16 gradient buffers, in chunks so nothing is allocated.
#include "sharding/gradient_elements.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "core/error.h"

namespace zt::zero {
namespace {

constexpr std::size_t kChunk = 1024;  // elements converted at a time, on the stack

// Calls fn(begin, chunk of f32 values) over `values`, converting when not f32; with
// `write_back` the (possibly changed) chunk is rounded back into `values`.
template <typename Fn>
void for_each_chunk(const Tensor& values, bool write_back, Fn&& fn) {
  const auto total = static_cast<std::size_t>(values.numel());
  if (values.dtype() == DType::kF32) {
    fn(std::size_t{0}, values.span<float>());
    return;
  }
  const std::size_t element_bytes = dtype_size(values.dtype());
  auto* bytes = static_cast<std::byte*>(values.data());
  std::array<float, kChunk> chunk;
  for (std::size_t begin = 0; begin < total; begin += kChunk) {
    const std::size_t count = std::min(kChunk, total - begin);
    void* at = bytes + begin * element_bytes;
    convert_elements(at, values.dtype(), chunk.data(), DType::kF32, count);
    fn(begin, std::span<float>(chunk.data(), count));
    if (write_back) convert_elements(chunk.data(), DType::kF32, at, values.dtype(), count);
  }
}

}  // namespace

double sum_of_squares(const Tensor& values) {
  double sum = 0.0;
  for_each_chunk(values, false, [&](std::size_t, std::span<float> chunk) {
    for (float v : chunk) sum += double{v} * v;
  });
  return sum;
}

void scale_in_place(const Tensor& values, float factor) {
  for_each_chunk(values, true, [&](std::size_t, std::span<float> chunk) {
    for (float& v : chunk) v *= factor;
  });
}

void add_into(const Tensor& src, const Tensor& dst, bool replace) {
  ZT_CHECK(src.dtype() == DType::kF32 && src.numel() == dst.numel(),
           "add_into needs an f32 source as long as its destination");
  const float* from = src.data_as<float>();
  for_each_chunk(dst, true, [&](std::size_t begin, std::span<float> chunk) {
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      chunk[i] = (replace ? 0.0f : chunk[i]) + from[begin + i];
    }
  });
}

void copy_to_f32(const Tensor& values, std::span<float> out) {
  ZT_CHECK(out.size() == static_cast<std::size_t>(values.numel()), "copy_to_f32 length");
  convert_elements(values.data(), values.dtype(), out.data(), DType::kF32, out.size());
}

void fill_zero_bytes(const Tensor& values) { std::memset(values.data(), 0, values.nbytes()); }

}  // namespace zt::zero
