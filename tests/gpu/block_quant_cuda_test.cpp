// CUDA block quantization against the CPU kernels on the same inputs, byte for byte: the
// payload (its padding included), the scales and the dequantized values, for int8 and int4,
// f32, bf16 and f16, block sizes 1, 3 and 2048 and counts 0, 1, 7, block - 1, block,
// block + 1, 22 and 2^20 + 3, with a NaN, an inf and an all-zero block in the input. Skips
// without a GPU.
#include "nn/kernels/cuda/block_quant_cuda.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/random.h"
#include "nn/kernels/cpu/block_quant_cpu.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::nn {
namespace {

using gpu_test::DeviceBuffer;
using math::BlockQuantFormat;
using math::QuantBits;

constexpr QuantBits kBits[] = {QuantBits::kInt8, QuantBits::kInt4};
constexpr std::int64_t kBlockSizes[] = {1, 3, 2048};

// Normal values scaled per block, with a NaN, an inf and a zero block where the count
// allows (seeded by `seed`).
std::vector<float> inputs(std::int64_t count, std::int64_t block, std::uint64_t seed) {
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto b = static_cast<std::int64_t>(i) / block;
    values[i] = std::ldexp(standard_normal(seed, i), static_cast<int>(b % 41) - 20);
    if (b == 2) values[i] = 0.0f;
  }
  if (count > 3 * block) values[static_cast<std::size_t>(3 * block)] = NAN;
  if (count > 4 * block) values[static_cast<std::size_t>(4 * block)] = -INFINITY;
  return values;
}

template <typename T>
struct Named;
template <>
struct Named<float> {
  static constexpr const char* kName = "f32";
};
template <>
struct Named<BF16> {
  static constexpr const char* kName = "bf16";
};
template <>
struct Named<F16> {
  static constexpr const char* kName = "f16";
};
struct TypeNames {
  template <typename T>
  static std::string GetName(int) {
    return Named<T>::kName;
  }
};
using QuantTypes = ::testing::Types<float, BF16, F16>;

template <typename T>
class BlockQuantCuda : public ::testing::Test {};
TYPED_TEST_SUITE(BlockQuantCuda, QuantTypes, TypeNames);

template <typename U>
bool same_bytes(const std::vector<U>& a, const std::vector<U>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(U)) == 0);
}

TYPED_TEST(BlockQuantCuda, MatchesCpuBitForBit) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (const QuantBits bits : kBits) {
    for (const std::int64_t block : kBlockSizes) {
      const std::int64_t counts[] = {0,     1,         7,  block - 1,
                                     block, block + 1, 22, (std::int64_t{1} << 20) + 3};
      for (const std::int64_t count : counts) {
        const BlockQuantFormat format{bits, block};
        SCOPED_TRACE("int" + std::to_string(static_cast<int>(bits)) + ", block " +
                     std::to_string(block) + ", count " + std::to_string(count) + ", seed 21");
        const std::vector<T> x = gpu_test::to_storage<T>(inputs(count, block, 21));
        const auto payload_bytes =
            static_cast<std::size_t>(4 * math::quant_payload_words(count, format));
        const auto blocks = static_cast<std::size_t>(math::quant_block_count(count, block));
        std::vector<std::uint8_t> payload_cpu(payload_bytes);
        std::vector<float> scales_cpu(blocks);
        cpu::quantize_blocks(x.data(), count, format, payload_cpu.data(), scales_cpu.data());
        std::vector<T> y_cpu(x.size());
        cpu::dequantize_blocks(payload_cpu.data(), scales_cpu.data(), count, format, y_cpu.data());

        DeviceBuffer<T> x_dev(x), y_dev(x.size());
        // Garbage in the outputs, so that a byte the kernel fails to write shows.
        DeviceBuffer<std::uint8_t> payload_dev(std::vector<std::uint8_t>(payload_bytes, 0xAB));
        DeviceBuffer<float> scales_dev(blocks);
        cuda::quantize_blocks(x_dev.get(), count, format, payload_dev.get(), scales_dev.get(),
                              nullptr);
        cuda::dequantize_blocks(payload_dev.get(), scales_dev.get(), count, format, y_dev.get(),
                                nullptr);
        EXPECT_TRUE(same_bytes(payload_dev.download(), payload_cpu));
        EXPECT_TRUE(same_bytes(scales_dev.download(), scales_cpu));
        EXPECT_TRUE(same_bytes(y_dev.download(), y_cpu));
      }
    }
  }
}

}  // namespace
}  // namespace zt::nn
