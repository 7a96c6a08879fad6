// Sums and maxima over a row in a fixed order of kSumLanes partial results, so that a loop
// over them vectorizes on every CPU instruction set and still gives the same bits.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace zt::nn::math {

// Note [Sums in lanes]
// A row's max and sum are reductions in an order. These keep kSumLanes partial results,
// element j of the row going to lane j % kSumLanes, then combine the lanes pairwise in a fixed
// tree (lane l with lane l + 8, then l + 4, ...). The order depends on the row's length
// alone, so AVX-512 (one register of lanes), AVX2 (two) and the x86-64 baseline (four) add
// the same numbers in the same order and give the same bits (Note [One loop, three
// instruction sets] in nn/kernels/cpu/gelu_cpu.cpp), where a sequential sum would stay scalar.
// It differs from a sequential sum by round-off.
inline constexpr std::int64_t kSumLanes = 16;

ZT_HOST_DEVICE float larger(float a, float b) { return a > b ? a : b; }

// Lane l with lane l + width, widths kSumLanes / 2, ..., 1 (Note [Sums in lanes]).
ZT_HOST_DEVICE float max_of_lanes(float (&lanes)[kSumLanes]) {
  for (std::int64_t width = kSumLanes / 2; width > 0; width /= 2) {
    for (std::int64_t l = 0; l < width; ++l) lanes[l] = larger(lanes[l], lanes[l + width]);
  }
  return lanes[0];
}
ZT_HOST_DEVICE float sum_of_lanes(float (&lanes)[kSumLanes]) {
  for (std::int64_t width = kSumLanes / 2; width > 0; width /= 2) {
    for (std::int64_t l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

}  // namespace zt::nn::math
