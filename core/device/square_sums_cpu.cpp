// The square-sum loop written once and instantiated per vector instruction set (Note [Square
// sums in eight lanes]); core/CMakeLists.txt compiles this file with -ffp-contract=off.
#include "core/device/square_sums_cpu.h"

#include <algorithm>
#include <string>

#include "core/cpu_features.h"
#include "core/device/math/buffer_math.h"
#include "core/error.h"

namespace zt {
namespace {

[[gnu::always_inline]] inline void accumulate_lanes(const float* values, std::size_t count,
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

void accumulate_baseline(const float* values, std::size_t count, SquareSumLanes& lanes) {
  accumulate_lanes(values, count, lanes);
}
#if defined(__x86_64__)
[[gnu::target("avx2,fma")]] void accumulate_avx2(const float* values, std::size_t count,
                                                 SquareSumLanes& lanes) {
  accumulate_lanes(values, count, lanes);
}
[[gnu::target("avx512f,fma")]] void accumulate_avx512(const float* values, std::size_t count,
                                                      SquareSumLanes& lanes) {
  accumulate_lanes(values, count, lanes);
}
#endif

std::vector<SquareSumPath> detect_paths() {
  std::vector<SquareSumPath> paths{SquareSumPath::kBaseline};
  const CpuFeatures& cpu = cpu_features();
  if (cpu.fma && cpu.avx2) paths.push_back(SquareSumPath::kAvx2);
  if (cpu.fma && cpu.avx512f) paths.push_back(SquareSumPath::kAvx512);
  return paths;
}

}  // namespace

std::string_view square_sum_path_name(SquareSumPath path) {
  switch (path) {
    case SquareSumPath::kAvx2:
      return "avx2";
    case SquareSumPath::kAvx512:
      return "avx512";
    case SquareSumPath::kBaseline:
      break;
  }
  return "baseline";
}

const std::vector<SquareSumPath>& available_square_sum_paths() {
  static const std::vector<SquareSumPath> paths = detect_paths();
  return paths;
}

void accumulate_square_sums(const float* values, std::size_t count, SquareSumLanes& lanes) {
  static const SquareSumPath widest = available_square_sum_paths().back();
  accumulate_square_sums(widest, values, count, lanes);
}

void accumulate_square_sums(SquareSumPath path, const float* values, std::size_t count,
                            SquareSumLanes& lanes) {
  const auto& paths = available_square_sum_paths();
  ZT_CHECK(std::find(paths.begin(), paths.end(), path) != paths.end(),
           "a square sum asked for " + std::string(square_sum_path_name(path)) +
               ", which this CPU lacks");
  switch (path) {
#if defined(__x86_64__)
    case SquareSumPath::kAvx512:
      return accumulate_avx512(values, count, lanes);
    case SquareSumPath::kAvx2:
      return accumulate_avx2(values, count, lanes);
#endif
    default:
      return accumulate_baseline(values, count, lanes);
  }
}

double total_of_lanes(const SquareSumLanes& lanes) {
  const double low = (lanes[0] + lanes[4]) + (lanes[2] + lanes[6]);
  const double high = (lanes[1] + lanes[5]) + (lanes[3] + lanes[7]);
  return low + high;
}

}  // namespace zt
