// combine_elements: one loop per (dtype, op), each element loaded as f32, combined, divided
// (avg, final hop) and stored back with round-to-nearest-even (core/dtype.h).
#include "comm/gloo/combine_elements.h"

#include <cstdint>
#include <string>

#include "core/error.h"

namespace zt::comm {
namespace {

struct F32Format {
  using Storage = float;
  static float load(float value) { return value; }
  static float store(float value) { return value; }
};
struct BF16Format {
  using Storage = std::uint16_t;
  static float load(std::uint16_t bits) { return bf16_bits_to_f32(bits); }
  static std::uint16_t store(float value) { return f32_to_bf16_bits(value); }
};
struct F16Format {
  using Storage = std::uint16_t;
  static float load(std::uint16_t bits) { return f16_bits_to_f32(bits); }
  static std::uint16_t store(float value) { return f32_to_f16_bits(value); }
};

// max that propagates NaN from either side, as a sum would.
inline float nan_max(float a, float b) { return (a > b || a != a) ? a : b; }

template <typename Format, bool kMax>
void combine_loop(void* dst_bytes, const void* received_bytes, const void* local_bytes,
                  std::size_t count, float divisor) {
  using Storage = typename Format::Storage;
  auto* dst = static_cast<Storage*>(dst_bytes);
  const auto* received = static_cast<const Storage*>(received_bytes);
  const auto* local = static_cast<const Storage*>(local_bytes);
  for (std::size_t i = 0; i < count; ++i) {
    const float a = Format::load(received[i]);
    const float b = Format::load(local[i]);
    const float combined = kMax ? nan_max(a, b) : a + b;
    dst[i] = Format::store(divisor == 1.0f ? combined : combined / divisor);
  }
}

template <typename Format>
void combine_for_format(void* dst, const void* received, const void* local, std::size_t count,
                        ReduceOp op, float divisor) {
  if (op == ReduceOp::kMax) {
    combine_loop<Format, true>(dst, received, local, count, 1.0f);
  } else {
    combine_loop<Format, false>(dst, received, local, count, divisor);
  }
}

}  // namespace

void combine_elements(void* dst, const void* received, const void* local, std::size_t count,
                      DType dtype, ReduceOp op, float divisor) {
  switch (dtype) {
    case DType::kF32:
      combine_for_format<F32Format>(dst, received, local, count, op, divisor);
      return;
    case DType::kBF16:
      combine_for_format<BF16Format>(dst, received, local, count, op, divisor);
      return;
    case DType::kF16:
      combine_for_format<F16Format>(dst, received, local, count, op, divisor);
      return;
    case DType::kI32:
      break;  // check_request refuses reductions of integers
  }
  ZT_CHECK(false, "combine_elements of " + std::string(dtype_name(dtype)));
}

}  // namespace zt::comm
