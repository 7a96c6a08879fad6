// Block-wise int8/int4 quantization on the CPU (Note [Block quantization format] in
// nn/kernels/math/block_quant_math.h): the sizes, every element within half a step of its
// block at counts 0, 1, 7, block - 1, block, block + 1, 22 and 2^20 + 3 and block sizes 1, 3
// and 2048, all-zero and non-finite blocks, the int4 nibble layout, bf16/f16 inputs and the
// backend op's padding and size checks; every vector path gives the same bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/random.h"
#include "cpu_test_context.h"
#include "nn/kernels/cpu/block_quant_cpu.h"

namespace zt::nn {
namespace {

using math::BlockQuantFormat;
using math::QuantBits;

constexpr QuantBits kBits[] = {QuantBits::kInt8, QuantBits::kInt4};
constexpr std::int64_t kBlockSizes[] = {1, 3, 2048};

std::vector<std::int64_t> counts_for(std::int64_t block) {
  return {0, 1, 7, block - 1, block, block + 1, 22, (std::int64_t{1} << 20) + 3};
}

std::string trace(const BlockQuantFormat& format, std::int64_t count) {
  return "int" + std::to_string(static_cast<int>(format.bits)) + ", block " +
         std::to_string(format.block_elements) + ", count " + std::to_string(count);
}

// Normal values whose magnitude changes from block to block (2^-20 .. 2^20), so that the
// scales differ and a bug mixing up blocks shows. Seeded by `seed`.
std::vector<float> inputs(std::int64_t count, std::int64_t block, std::uint64_t seed) {
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto b = static_cast<int>(static_cast<std::int64_t>(i) / block % 41);
    values[i] = std::ldexp(standard_normal(seed, i), b - 20);
  }
  return values;
}

struct Quantized {
  std::vector<std::uint8_t> payload;  // quant_payload_words * 4 bytes
  std::vector<float> scales;
};

template <typename T>
Quantized quantize(const std::vector<T>& x, const BlockQuantFormat& format) {
  const auto count = static_cast<std::int64_t>(x.size());
  Quantized q{std::vector<std::uint8_t>(
                  static_cast<std::size_t>(4 * math::quant_payload_words(count, format)), 0xAB),
              std::vector<float>(
                  static_cast<std::size_t>(math::quant_block_count(count, format.block_elements)))};
  cpu::quantize_blocks(x.data(), count, format, q.payload.data(), q.scales.data());
  return q;
}

std::vector<float> dequantize(const Quantized& q, std::int64_t count,
                              const BlockQuantFormat& format) {
  std::vector<float> y(static_cast<std::size_t>(count));
  cpu::dequantize_blocks(q.payload.data(), q.scales.data(), count, format, y.data());
  return y;
}

TEST(BlockQuant, SizesCountWholeBlocksAndTheShortLastOne) {
  const BlockQuantFormat int8{QuantBits::kInt8, 2048};
  const BlockQuantFormat int4{QuantBits::kInt4, 2048};
  EXPECT_EQ(math::quant_payload_bytes(5000, int8), 5000);
  EXPECT_EQ(math::quant_scale_bytes(5000, int8), 3 * 4);
  EXPECT_EQ(math::quant_payload_bytes(5000, int4), 1024 + 1024 + 452);
  EXPECT_EQ(math::quant_payload_words(5000, int4), 625);
  // Odd blocks start on a byte of their own: 3 + 3 + 1 elements take 2 + 2 + 1 bytes.
  const BlockQuantFormat odd{QuantBits::kInt4, 3};
  EXPECT_EQ(math::quant_payload_bytes(7, odd), 5);
  EXPECT_EQ(math::quant_payload_words(7, odd), 2);
  EXPECT_EQ(math::quant_scale_bytes(7, odd), 3 * 4);
  EXPECT_EQ(math::quant_payload_bytes(0, int4), 0);
  EXPECT_EQ(math::quant_scale_bytes(0, int8), 0);
}

TEST(BlockQuant, EveryElementIsWithinHalfAStepOfItsBlock) {
  for (const QuantBits bits : kBits) {
    for (const std::int64_t block : kBlockSizes) {
      for (const std::int64_t count : counts_for(block)) {
        const BlockQuantFormat format{bits, block};
        SCOPED_TRACE(trace(format, count) + ", seed 11");
        const std::vector<float> x = inputs(count, block, 11);
        const Quantized q = quantize(x, format);
        const std::vector<float> y = dequantize(q, count, format);
        const float qmax = static_cast<float>(math::quant_max(bits));
        std::int64_t bad = 0;
        for (std::int64_t b = 0; b < static_cast<std::int64_t>(q.scales.size()); ++b) {
          const std::int64_t first = b * block, last = std::min(count, first + block);
          float abs_max = 0.0f;
          for (std::int64_t i = first; i < last; ++i) abs_max = std::max(abs_max, std::fabs(x[i]));
          ASSERT_EQ(q.scales[b], abs_max / qmax) << "block " << b;
          // Half a step, plus the f32 roundings of x / scale and of q * scale.
          const double bound = 0.5 * q.scales[b] + std::ldexp(static_cast<double>(abs_max), -21);
          for (std::int64_t i = first; i < last; ++i) {
            bad += std::fabs(static_cast<double>(x[i]) - y[i]) > bound ? 1 : 0;
          }
        }
        EXPECT_EQ(bad, 0);
        const std::int64_t bytes = math::quant_payload_bytes(count, format);
        for (std::size_t i = static_cast<std::size_t>(bytes); i < q.payload.size(); ++i) {
          EXPECT_EQ(q.payload[i], 0) << "padding byte " << i;
        }
      }
    }
  }
}

// Bit for bit (NaN included). memcmp is not called on empty vectors: their data() may be
// null, which memcmp may not be given even for zero bytes.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), 4 * a.size()) == 0);
}

// Every vector path (Note [One loop, three instruction sets]) against the widest one.
TEST(BlockQuant, EveryVectorPathGivesTheSameBits) {
  for (const QuantBits bits : kBits) {
    for (const std::int64_t count :
         {std::int64_t{0}, std::int64_t{1}, std::int64_t{22}, (std::int64_t{1} << 20) + 3}) {
      const BlockQuantFormat format{bits, 2048};
      std::vector<float> x = inputs(count, 2048, 14);
      if (count > 22) x[5000] = std::numeric_limits<float>::quiet_NaN();
      const Quantized want = quantize(x, format);
      const std::vector<float> y_want = dequantize(want, count, format);
      for (const VectorIsa isa : supported_vector_isas()) {
        SCOPED_TRACE(trace(format, count) + " " + std::string(vector_isa_name(isa)) + ", seed 14");
        Quantized got = want;
        cpu::quantize_blocks(x.data(), count, format, got.payload.data(), got.scales.data(), isa);
        EXPECT_EQ(got.payload, want.payload);
        EXPECT_TRUE(same_bits(got.scales, want.scales));
        std::vector<float> y(x.size());
        cpu::dequantize_blocks(want.payload.data(), want.scales.data(), count, format, y.data(),
                               isa);
        EXPECT_TRUE(same_bits(y, y_want));
      }
    }
  }
}

TEST(BlockQuant, AllZeroBlockHasScaleZeroAndDequantizesToZero) {
  for (const QuantBits bits : kBits) {
    const BlockQuantFormat format{bits, 2048};
    std::vector<float> x = inputs(5000, 2048, 12);
    std::fill(x.begin() + 2048, x.begin() + 4096, 0.0f);
    const Quantized q = quantize(x, format);
    EXPECT_EQ(q.scales[1], 0.0f);
    EXPECT_GT(q.scales[0], 0.0f);
    const std::int64_t block_bytes = math::quant_block_bytes(2048, bits);
    for (std::int64_t i = block_bytes; i < 2 * block_bytes; ++i) ASSERT_EQ(q.payload[i], 0);
    const std::vector<float> y = dequantize(q, 5000, format);
    for (std::size_t i = 2048; i < 4096; ++i) ASSERT_EQ(y[i], 0.0f);
  }
}

TEST(BlockQuant, Int4PacksLowNibbleFirstAndOddBlocksEndOnAZeroHighNibble) {
  // Blocks of 3: {7, -7, 1} has scale 1; {-2, 0, 2} has scale 2/7, so q = {-7, 0, 7}.
  const std::vector<float> x = {7.0f, -7.0f, 1.0f, -2.0f, 0.0f, 2.0f};
  const Quantized q = quantize(x, BlockQuantFormat{QuantBits::kInt4, 3});
  const std::vector<std::uint8_t> want = {0x97, 0x01, 0x09, 0x07};
  EXPECT_EQ(q.payload, want);
  EXPECT_EQ(q.scales, (std::vector<float>{1.0f, 2.0f / 7.0f}));
  const Quantized q8 = quantize(x, BlockQuantFormat{QuantBits::kInt8, 3});
  const std::vector<std::uint8_t> want8 = {127, 0x81, 18, 0x81, 0, 127, 0, 0};  // 1 * 127 / 7
  EXPECT_EQ(q8.payload, want8);
}

TEST(BlockQuant, TiesRoundToEven) {
  // Scale 1 (max 7 in int4): 2.5 -> 2, 3.5 -> 4, -0.5 -> 0, -1.5 -> -2.
  const std::vector<float> x = {7.0f, 2.5f, 3.5f, -0.5f, -1.5f, 0.0f};
  const Quantized q = quantize(x, BlockQuantFormat{QuantBits::kInt4, 6});
  EXPECT_EQ(q.scales[0], 1.0f);
  EXPECT_EQ(dequantize(q, 6, BlockQuantFormat{QuantBits::kInt4, 6}),
            (std::vector<float>{7.0f, 2.0f, 4.0f, 0.0f, -2.0f, 0.0f}));
}

TEST(BlockQuant, NonFiniteInputMakesItsBlockNanAndLeavesTheOthersExact) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const QuantBits bits : kBits) {
    const BlockQuantFormat format{bits, 4};
    std::vector<float> x = {1.0f, -2.0f, 0.5f, 0.25f, 1.0f, nan,
                            3.0f, 4.0f,  -inf, 1.0f,  2.0f, 3.0f};
    const Quantized q = quantize(x, format);
    EXPECT_EQ(q.scales[0], 2.0f / static_cast<float>(math::quant_max(bits)));
    for (const int b : {1, 2}) {
      std::uint32_t scale_bits = 0;
      std::memcpy(&scale_bits, &q.scales[b], 4);
      EXPECT_EQ(scale_bits, 0x7FC00000u) << "block " << b;
    }
    const std::vector<float> y = dequantize(q, 12, format);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(std::isfinite(y[i])) << i;
    for (std::size_t i = 4; i < 12; ++i) EXPECT_TRUE(std::isnan(y[i])) << i;
  }
}

// Through the backend op: bf16 and f16 inputs quantize as their f32 values do, and
// dequantizing into them rounds each f32 result once.
template <typename T>
void check_storage_type(DType dtype) {
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext context(tracker);
  const KernelBackend& kernels = testing::cpu_kernels();
  for (const QuantBits bits : kBits) {
    const BlockQuantFormat format{bits, 3};
    const std::int64_t count = 22;
    SCOPED_TRACE(trace(format, count) + " " + std::string(dtype_name(dtype)));
    std::vector<T> x;
    for (const float v : inputs(count, 3, 13)) x.push_back(T(v));
    std::vector<float> widened;
    for (const T& v : x) widened.push_back(static_cast<float>(v));
    const Quantized want = quantize(widened, format);

    Quantized got = want;
    std::fill(got.payload.begin(), got.payload.end(), 0xCD);
    const Shape payload_shape({math::quant_payload_words(count, format)});
    const Shape scales_shape({static_cast<std::int64_t>(got.scales.size())});
    const Tensor xt = Tensor::wrap(x.data(), Shape({count}), dtype);
    const Tensor payload = Tensor::wrap(got.payload.data(), payload_shape, DType::kI32);
    const Tensor scales = Tensor::wrap(got.scales.data(), scales_shape, DType::kF32);
    kernels.quantize_blocks(context.device(), format, xt, payload, scales);
    EXPECT_EQ(got.payload, want.payload);
    EXPECT_EQ(got.scales, want.scales);

    std::vector<T> y(x.size());
    kernels.dequantize_blocks(context.device(), format, payload, scales,
                              Tensor::wrap(y.data(), Shape({count}), dtype));
    const std::vector<float> y32 = dequantize(want, count, format);
    for (std::size_t i = 0; i < y.size(); ++i) {
      EXPECT_EQ(static_cast<float>(y[i]), static_cast<float>(T(y32[i]))) << i;
    }
    // A payload sized for another count is a bug of the caller.
    const Tensor short_payload = payload.view(0, Shape({payload.numel() - 1}));
    EXPECT_ANY_THROW(kernels.quantize_blocks(context.device(), format, xt, short_payload, scales));
  }
}

TEST(BlockQuant, Bf16AndF16InputsQuantizeAsTheirF32Values) {
  check_storage_type<BF16>(DType::kBF16);
  check_storage_type<F16>(DType::kF16);
  check_storage_type<float>(DType::kF32);
}

}  // namespace
}  // namespace zt::nn
