// The CPU residual add: add_f32 (nn/kernels/cpu/add_cpu.h) gives the exact f32 sum on every
// vector path, in place or not, at sizes 0, 1, 22 and 2^20 + 3; KernelBackend::add rounds
// each f32 sum once into f32, bf16 and f16 outputs.
#include "nn/kernels/cpu/add_cpu.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/random.h"
#include "cpu_test_context.h"

namespace zt::nn::cpu {
namespace {

const std::int64_t kSizes[] = {0, 1, 22, (std::int64_t{1} << 20) + 3};

std::vector<float> inputs(std::int64_t n, std::uint64_t seed) {
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = standard_normal(seed, i);
  return values;
}

bool same_bytes(const void* a, const void* b, std::size_t bytes) {
  return bytes == 0 || std::memcmp(a, b, bytes) == 0;
}

TEST(AddCpu, EveryVectorPathGivesTheExactSumInPlaceOrNot) {
  for (const std::int64_t n : kSizes) {
    const std::vector<float> a = inputs(n, 7), b = inputs(n, 8);
    std::vector<float> want(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) want[i] = a[i] + b[i];
    const std::size_t bytes = want.size() * sizeof(float);
    for (const VectorIsa isa : supported_vector_isas()) {
      SCOPED_TRACE(std::string(vector_isa_name(isa)) + " size " + std::to_string(n));
      std::vector<float> out(a.size());
      add_f32(a.data(), b.data(), out.data(), n, isa);
      EXPECT_TRUE(same_bytes(out.data(), want.data(), bytes));
      std::vector<float> in_place = a;  // out = a, as `dw += partial`
      add_f32(in_place.data(), b.data(), in_place.data(), n, isa);
      EXPECT_TRUE(same_bytes(in_place.data(), want.data(), bytes)) << "in place";
    }
  }
}

TEST(AddCpu, BackendAddRoundsEachF32SumOnceInEveryDtype) {
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext cpu(tracker);
  for (const DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (const std::int64_t n : kSizes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " size " + std::to_string(n));
      const auto count = static_cast<std::size_t>(n);
      const auto make = [&](std::uint64_t seed) {
        Tensor t = Tensor::zeros(Shape{n}, dtype, tracker, MemoryCategory::kActivations);
        const std::vector<float> values = inputs(n, seed);
        if (n > 0) convert_elements(values.data(), DType::kF32, t.data(), dtype, count);
        return t;
      };
      const Tensor a = make(9), b = make(10);
      const Tensor out = Tensor::zeros(Shape{n}, dtype, tracker, MemoryCategory::kActivations);
      testing::cpu_kernels().add(cpu.device(), a, b, out);
      // The reference: widen both, add in f32, round the sum once into the dtype.
      std::vector<float> a32(count), b32(count), sum(count);
      if (n > 0) {
        convert_elements(a.data(), dtype, a32.data(), DType::kF32, count);
        convert_elements(b.data(), dtype, b32.data(), DType::kF32, count);
      }
      for (std::size_t i = 0; i < count; ++i) sum[i] = a32[i] + b32[i];
      std::vector<unsigned char> want(out.nbytes());
      if (n > 0) convert_elements(sum.data(), DType::kF32, want.data(), dtype, count);
      EXPECT_TRUE(same_bytes(out.data(), want.data(), want.size()));
    }
  }
}

}  // namespace
}  // namespace zt::nn::cpu
