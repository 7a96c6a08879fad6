// Σ values² on the CPU (the gradient norm every step) in eight double lanes, compiled for the
// widest vector unit the CPU has and giving the same bits on every path.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>

#include "core/device/math/buffer_math.h"
#include "core/vector_isa.h"

namespace zt {

// Note [Square sums in eight lanes]
// A sum of squares over a chunk of parallel_sum adds element i of the chunk into lane i % 8
// (a double: the square of an f32 is exact in it) and then adds the lanes as
// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)). Eight independent lanes fill two 256-bit
// registers of doubles (what GCC picks for AVX2 and, by its tuning, for AVX-512) or four SSE2
// ones, so the loop is no longer one chain of dependent adds; each path performs the same adds in
// the same order (the file is compiled without contraction into fused multiply-adds), so every path
// gives the same bits, and with parallel_sum's fixed chunks so does every thread count.
inline constexpr std::size_t kSquareSumLanes = 8;
using SquareSumLanes = std::array<double, kSquareSumLanes>;

// lanes[i % 8] += double(values[i])² for i < count (on the widest path, or on `isa`, which
// this CPU must run). A run of calls over consecutive pieces of
// one chunk continues its lanes when every piece but the last has a multiple of 8 elements.
void accumulate_square_sums(const float* values, std::size_t count, SquareSumLanes& lanes);
void accumulate_square_sums(VectorIsa isa, const float* values, std::size_t count,
                            SquareSumLanes& lanes);

// The loop itself, for a caller that compiles it into its own loop on each vector path (the
// optimizer's step, which sums the gradients' squares in the pass that reads them: Note [The
// gradient norm in the update's pass] in optim/step_internal.h). Its translation unit must be
// compiled with -ffp-contract=off, as this one's is, for the same bits.
[[gnu::always_inline]] inline void accumulate_square_sum_lanes(const float* values,
                                                               std::size_t count,
                                                               SquareSumLanes& lanes) {
  double running[kSquareSumLanes];
  std::copy(lanes.begin(), lanes.end(), running);
  std::size_t i = 0;
  for (; i + kSquareSumLanes <= count; i += kSquareSumLanes) {
    for (std::size_t lane = 0; lane < kSquareSumLanes; ++lane) {
      running[lane] += buffer_math::square(values[i + lane]);
    }
  }
  for (std::size_t lane = 0; i + lane < count; ++lane) {
    running[lane] += buffer_math::square(values[i + lane]);
  }
  std::copy(running, running + kSquareSumLanes, lanes.begin());
}

// The lanes added in the fixed order of Note [Square sums in eight lanes].
double total_of_lanes(const SquareSumLanes& lanes);

}  // namespace zt
