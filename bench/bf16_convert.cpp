// bench_bf16_convert: f32 -> bf16 and bf16 -> f32 rates (elements per ns, one thread) on every
// conversion path this CPU has (Note [bf16 conversion paths]), for a buffer in L1, one in L2
// and one in memory; the ratio that matters is each path's rate over the scalar path's.
#include "core/bf16_convert.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Best-of-runs elements per ns of fn over `elements`, repeated to about 2^26 elements per run.
template <typename Fn>
double elements_per_ns(std::size_t elements, const Fn& fn) {
  const std::size_t repeats = std::max<std::size_t>(1, (std::size_t{1} << 26) / elements);
  double best = 0.0;
  for (int run = 0; run < 5; ++run) {
    const auto start = Clock::now();
    for (std::size_t r = 0; r < repeats; ++r) fn();
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
    best = std::max(best, static_cast<double>(elements * repeats) / ns);
  }
  return best;
}

}  // namespace

int main() {
  std::printf("# one thread; elements/ns, best of 5 runs; (x) = over the scalar path\n");
  std::printf("%-12s %10s %16s %16s\n", "path", "elements", "f32->bf16", "bf16->f32");
  std::mt19937 rng(1);
  std::normal_distribution<float> value(0.0f, 1.0f);
  for (std::size_t elements : {std::size_t{2048}, std::size_t{1} << 16, std::size_t{1} << 24}) {
    std::vector<float> f32(elements);
    for (float& v : f32) v = value(rng);
    std::vector<zt::BF16> bf16(elements);
    double scalar_narrow = 0.0, scalar_widen = 0.0;
    for (zt::Bf16ConvertPath path : zt::available_bf16_convert_paths()) {
      const double narrow = elements_per_ns(
          elements, [&] { zt::f32_to_bf16(path, f32.data(), bf16.data(), elements); });
      const double widen = elements_per_ns(
          elements, [&] { zt::bf16_to_f32(path, bf16.data(), f32.data(), elements); });
      if (path == zt::Bf16ConvertPath::kScalar) {
        scalar_narrow = narrow;
        scalar_widen = widen;
      }
      std::printf("%-12s %10zu %8.2f (%5.1fx) %8.2f (%5.1fx)\n",
                  std::string(zt::bf16_convert_path_name(path)).c_str(), elements, narrow,
                  narrow / scalar_narrow, widen, widen / scalar_widen);
    }
  }
  return 0;
}
