// DType names and bulk conversion loops.
#include "core/dtype.h"

#include <cstring>

#include "core/bf16_convert.h"
#include "core/error.h"

namespace zt {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kBF16:
      return "bf16";
    case DType::kF16:
      return "f16";
    case DType::kI32:
      return "i32";
  }
  return "unknown";
}

namespace {

float load_as_f32(const void* src, DType dtype, std::size_t i) {
  switch (dtype) {
    case DType::kF32:
      return static_cast<const float*>(src)[i];
    case DType::kBF16:
      return bf16_bits_to_f32(static_cast<const std::uint16_t*>(src)[i]);
    case DType::kF16:
      return f16_bits_to_f32(static_cast<const std::uint16_t*>(src)[i]);
    case DType::kI32:
      break;
  }
  return 0.0f;
}

void store_from_f32(void* dst, DType dtype, std::size_t i, float value) {
  switch (dtype) {
    case DType::kF32:
      static_cast<float*>(dst)[i] = value;
      return;
    case DType::kBF16:
      static_cast<std::uint16_t*>(dst)[i] = f32_to_bf16_bits(value);
      return;
    case DType::kF16:
      static_cast<std::uint16_t*>(dst)[i] = f32_to_f16_bits(value);
      return;
    case DType::kI32:
      return;
  }
}

}  // namespace

void convert_elements(const void* src, DType src_dtype, void* dst, DType dst_dtype,
                      std::size_t count) {
  if (src_dtype == dst_dtype) {
    std::memcpy(dst, src, count * dtype_size(src_dtype));
    return;
  }
  ZT_CHECK(is_floating(src_dtype) && is_floating(dst_dtype), "convert_elements of i32");
  ZT_CHECK(src != dst, "convert_elements between overlapping buffers");
  // bf16 <-> f32 on the CPU's vector path (Note [bf16 conversion paths]): the same bits.
  if (src_dtype == DType::kF32 && dst_dtype == DType::kBF16) {
    f32_to_bf16(static_cast<const float*>(src), static_cast<BF16*>(dst), count);
    return;
  }
  if (src_dtype == DType::kBF16 && dst_dtype == DType::kF32) {
    bf16_to_f32(static_cast<const BF16*>(src), static_cast<float*>(dst), count);
    return;
  }
  for (std::size_t i = 0; i < count; ++i) {
    store_from_f32(dst, dst_dtype, i, load_as_f32(src, src_dtype, i));
  }
}

}  // namespace zt
