// bench_block_quant: block quantization on this CPU, one thread, blocks of 2048: GB/s of the
// input read by quantize and of the output written by dequantize, for int8 and int4 from f32
// and bf16, 2^24 elements (in memory); the ratio that matters is quantize + dequantize's rate
// over a memcpy of the same input (what the quantized wire costs in local bandwidth).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/dtype.h"
#include "core/random.h"
#include "nn/kernels/cpu/block_quant_cpu.h"

namespace {

using Clock = std::chrono::steady_clock;

// Best-of-5 seconds of one call of fn.
template <typename Fn>
double best_seconds(const Fn& fn) {
  double best = 1e30;
  for (int run = 0; run < 5; ++run) {
    const auto start = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

template <typename T>
void bench(const char* dtype, zt::nn::math::QuantBits bits, std::int64_t count) {
  using namespace zt::nn;
  const math::BlockQuantFormat format{bits, 2048};
  std::vector<T> x(static_cast<std::size_t>(count)), y(x.size()), copy(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = T(zt::standard_normal(3, i));
  std::vector<std::uint8_t> payload(
      static_cast<std::size_t>(4 * math::quant_payload_words(count, format)));
  std::vector<float> scales(static_cast<std::size_t>(math::quant_block_count(count, 2048)));
  const double bytes = static_cast<double>(count) * sizeof(T);
  const double quantize = best_seconds(
      [&] { cpu::quantize_blocks(x.data(), count, format, payload.data(), scales.data()); });
  const double dequantize = best_seconds(
      [&] { cpu::dequantize_blocks(payload.data(), scales.data(), count, format, y.data()); });
  const double memcpy_s = best_seconds([&] { std::memcpy(copy.data(), x.data(), bytes); });
  std::printf("%-5s int%-2d %10lld %10.2f %12.2f %10.2f %10.2f\n", dtype, static_cast<int>(bits),
              static_cast<long long>(count), bytes / quantize / 1e9, bytes / dequantize / 1e9,
              bytes / memcpy_s / 1e9, memcpy_s / (quantize + dequantize));
}

}  // namespace

int main() {
  using zt::nn::math::QuantBits;
  const std::int64_t count = std::int64_t{1} << 24;
  std::printf("# one thread, blocks of 2048, best of 5; GB/s of the unquantized tensor\n");
  std::printf("%-5s %-5s %10s %10s %12s %10s %10s\n", "dtype", "bits", "elements", "quantize",
              "dequantize", "memcpy", "q+dq/memcpy");
  for (const QuantBits bits : {QuantBits::kInt8, QuantBits::kInt4}) {
    bench<float>("f32", bits, count);
    bench<zt::BF16>("bf16", bits, count);
  }
  return 0;
}
