// Path detection for core/bf16_convert.h (at run time, so one binary runs on any x86-64), the
// dispatch, and the scalar loops every path ends in.
#include "core/bf16_convert.h"

#include <string>

#include "core/bf16_convert_internal.h"
#include "core/cpu_features.h"
#include "core/error.h"

namespace zt {

namespace detail {

void f32_to_bf16_scalar(const float* src, BF16* dst, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) dst[i].bits = f32_to_bf16_bits(src[i]);
}

void bf16_to_f32_scalar(const BF16* src, float* dst, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) dst[i] = bf16_bits_to_f32(src[i].bits);
}

}  // namespace detail

std::string_view bf16_convert_path_name(Bf16ConvertPath path) {
  switch (path) {
    case Bf16ConvertPath::kScalar:
      return "scalar";
    case Bf16ConvertPath::kAvx2:
      return "avx2";
    case Bf16ConvertPath::kAvx512:
      return "avx512";
    case Bf16ConvertPath::kAvx512Bf16:
      return "avx512_bf16";
  }
  return "unknown";
}

bool bf16_convert_path_available(Bf16ConvertPath path) {
  const CpuFeatures& cpu = cpu_features();
  switch (path) {
    case Bf16ConvertPath::kScalar:
      return true;
    case Bf16ConvertPath::kAvx2:
      return cpu.avx2;
    case Bf16ConvertPath::kAvx512:
      return cpu.avx512f;
    case Bf16ConvertPath::kAvx512Bf16:
      return cpu.avx512bf16;
  }
  return false;
}

std::vector<Bf16ConvertPath> available_bf16_convert_paths() {
  std::vector<Bf16ConvertPath> paths;
  for (Bf16ConvertPath path : {Bf16ConvertPath::kScalar, Bf16ConvertPath::kAvx2,
                               Bf16ConvertPath::kAvx512, Bf16ConvertPath::kAvx512Bf16}) {
    if (bf16_convert_path_available(path)) paths.push_back(path);
  }
  return paths;
}

Bf16ConvertPath best_bf16_convert_path() {
  static const Bf16ConvertPath best = available_bf16_convert_paths().back();
  return best;
}

namespace {

void check_available(Bf16ConvertPath path) {
  ZT_CHECK(bf16_convert_path_available(path),
           "bf16 conversion path " + std::string(bf16_convert_path_name(path)) +
               " is not available on this CPU (ask available_bf16_convert_paths())");
}

void run_f32_to_bf16(Bf16ConvertPath path, const float* src, BF16* dst, std::size_t count) {
  switch (path) {
    case Bf16ConvertPath::kScalar:
      detail::f32_to_bf16_scalar(src, dst, count);
      return;
    case Bf16ConvertPath::kAvx2:
      detail::f32_to_bf16_avx2(src, dst, count);
      return;
    case Bf16ConvertPath::kAvx512:
      detail::f32_to_bf16_avx512(src, dst, count);
      return;
    case Bf16ConvertPath::kAvx512Bf16:
      detail::f32_to_bf16_avx512_bf16(src, dst, count);
      return;
  }
}

void run_bf16_to_f32(Bf16ConvertPath path, const BF16* src, float* dst, std::size_t count) {
  switch (path) {
    case Bf16ConvertPath::kScalar:
      detail::bf16_to_f32_scalar(src, dst, count);
      return;
    case Bf16ConvertPath::kAvx2:
      detail::bf16_to_f32_avx2(src, dst, count);
      return;
    case Bf16ConvertPath::kAvx512:
    case Bf16ConvertPath::kAvx512Bf16:  // widening is a shift: nothing for AVX512_BF16 to add
      detail::bf16_to_f32_avx512(src, dst, count);
      return;
  }
}

}  // namespace

void f32_to_bf16(Bf16ConvertPath path, const float* src, BF16* dst, std::size_t count) {
  check_available(path);
  run_f32_to_bf16(path, src, dst, count);
}

void bf16_to_f32(Bf16ConvertPath path, const BF16* src, float* dst, std::size_t count) {
  check_available(path);
  run_bf16_to_f32(path, src, dst, count);
}

void f32_to_bf16(const float* src, BF16* dst, std::size_t count) {
  run_f32_to_bf16(best_bf16_convert_path(), src, dst, count);
}

void bf16_to_f32(const BF16* src, float* dst, std::size_t count) {
  run_bf16_to_f32(best_bf16_convert_path(), src, dst, count);
}

}  // namespace zt
