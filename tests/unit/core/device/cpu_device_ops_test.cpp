// CpuDeviceOps on f32, bf16 and f16 against scalar references over the same buffer_math
// functions and dtype conversions, at sizes that cross the 1024-element conversion chunk.
#include "core/device/cpu_device_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/device/cpu_streams.h"
#include "core/device/math/buffer_math.h"
#include "core/memory_tracker.h"
#include "core/parallel_for.h"
#include "core/random.h"
#include "support/parallel_threads.h"

namespace zt {
namespace {

constexpr std::int64_t kSizes[] = {0, 1, 22, 1025, 3000};
constexpr DType kDtypes[] = {DType::kF32, DType::kBF16, DType::kF16};

// A host buffer of `n` elements of `dtype` holding seeded values (as stored: rounded).
struct HostBuffer {
  HostBuffer(DType dtype_in, std::int64_t n, std::uint64_t key)
      : dtype(dtype_in), bytes(static_cast<std::size_t>(n) * dtype_size(dtype_in) + 4) {
    std::vector<float> values(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = 2.0f * standard_normal(key, i);
    if (n > 0) convert_elements(values.data(), DType::kF32, bytes.data(), dtype, values.size());
    tensor = Tensor::wrap(bytes.data(), Shape({n}), dtype);
  }
  std::vector<float> as_f32() const {
    std::vector<float> out(static_cast<std::size_t>(tensor.numel()));
    if (!out.empty()) convert_elements(bytes.data(), dtype, out.data(), DType::kF32, out.size());
    return out;
  }
  DType dtype;
  std::vector<unsigned char> bytes;
  Tensor tensor;
};

float round_to(DType dtype, float value) {
  float out = 0.0f;
  std::uint16_t half = 0;
  if (dtype == DType::kF32) return value;
  convert_elements(&value, DType::kF32, &half, dtype, 1);
  convert_elements(&half, dtype, &out, DType::kF32, 1);
  return out;
}

std::string name(DType dtype, std::int64_t n) {
  return std::string(dtype_name(dtype)) + " n=" + std::to_string(n);
}

TEST(CpuDeviceOps, FillScaleAndCastMatchTheScalarReference) {
  DeviceOps& ops = cpu_device_ops();
  for (DType dtype : kDtypes) {
    for (std::int64_t n : kSizes) {
      SCOPED_TRACE(name(dtype, n));
      HostBuffer values(dtype, n, 11);
      const std::vector<float> before = values.as_f32();
      ops.scale(values.tensor, 0.3f);
      std::vector<float> got = values.as_f32();
      for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], round_to(dtype, buffer_math::scaled(before[i], 0.3f))) << i;
      }
      ops.fill(values.tensor, 1.1f);
      for (float v : values.as_f32()) ASSERT_EQ(v, round_to(dtype, 1.1f));
      for (DType to : kDtypes) {
        HostBuffer src(dtype, n, 12);
        HostBuffer dst(to, n, 13);
        ops.cast(src.tensor, dst.tensor);
        const std::vector<float> want = src.as_f32();
        got = dst.as_f32();
        for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], round_to(to, want[i])) << i;
      }
    }
  }
}

TEST(CpuDeviceOps, AxpbyMatchesTheScalarReferenceAcrossDtypes) {
  DeviceOps& ops = cpu_device_ops();
  for (DType x_dtype : kDtypes) {
    for (DType y_dtype : kDtypes) {
      for (std::int64_t n : kSizes) {
        SCOPED_TRACE(name(x_dtype, n) + " into " + std::string(dtype_name(y_dtype)));
        HostBuffer x(x_dtype, n, 21);
        HostBuffer y(y_dtype, n, 22);
        const std::vector<float> xs = x.as_f32();
        const std::vector<float> ys = y.as_f32();
        ops.axpby(0.5f, x.tensor, -1.25f, y.tensor);
        const std::vector<float> got = y.as_f32();
        for (std::size_t i = 0; i < got.size(); ++i) {
          ASSERT_EQ(got[i], round_to(y_dtype, 0.5f * xs[i] + -1.25f * ys[i])) << i;
        }
      }
    }
  }
}

TEST(CpuDeviceOps, AxpbyWithBetaZeroIgnoresNanInY) {
  DeviceOps& ops = cpu_device_ops();
  for (DType dtype : kDtypes) {
    SCOPED_TRACE(dtype_name(dtype));
    HostBuffer x(DType::kF32, 1500, 31);
    HostBuffer y(dtype, 1500, 32);
    ops.fill(y.tensor, std::numeric_limits<float>::quiet_NaN());
    ops.axpby(2.0f, x.tensor, 0.0f, y.tensor);
    const std::vector<float> xs = x.as_f32();
    const std::vector<float> got = y.as_f32();
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], round_to(dtype, 2.0f * xs[i]));
  }
  EXPECT_EQ(buffer_math::axpby(3.0f, 2.0f, 0.0f, std::numeric_limits<float>::infinity()), 6.0f);
}

// Per parallel_for chunk the eight double lanes of Note [Square sums in eight lanes], added in
// their fixed order, then over the chunks in order (Note [Chunks fixed by size]): bitwise, on
// every call and on any thread count.
TEST(CpuDeviceOps, SumOfSquaresIsTheChunkOrderedEightLaneLoopBitwiseOnAnyThreadCount) {
  DeviceOps& ops = cpu_device_ops();
  for (DType dtype : kDtypes) {
    for (std::int64_t n : {std::int64_t{0}, std::int64_t{22}, std::int64_t{(1 << 20) + 3}}) {
      SCOPED_TRACE(name(dtype, n));
      HostBuffer values(dtype, n, 41);
      const std::vector<float> f32 = values.as_f32();
      const std::int64_t grain = parallel_sum_grain(n, kParallelGrainElements);
      double want = 0.0;
      for (std::int64_t first = 0; first < n; first += grain) {
        double lane[8] = {};
        for (std::int64_t i = first; i < std::min(n, first + grain); ++i) {
          const double v = f32[static_cast<std::size_t>(i)];
          lane[(i - first) % 8] += v * v;
        }
        want += ((lane[0] + lane[4]) + (lane[2] + lane[6])) +
                ((lane[1] + lane[5]) + (lane[3] + lane[7]));
      }
      for (const int threads : testing::kThreadCounts) {
        const testing::ParallelThreads scope(threads);
        const double first = ops.sum_of_squares(values.tensor);
        EXPECT_EQ(first, want) << threads << " threads";
        EXPECT_EQ(ops.sum_of_squares(values.tensor), first) << threads << " threads";
      }
    }
  }
}

// Scale, axpby and cast over sizes below and above parallel_for's grain: the same bits on
// 1, 2 and 4 threads.
TEST(CpuDeviceOps, ElementwiseOpsGiveTheSameBitsOnAnyThreadCount) {
  DeviceOps& ops = cpu_device_ops();
  for (DType dtype : kDtypes) {
    for (std::int64_t n : {std::int64_t{1023}, 3 * kParallelGrainElements + 7}) {
      SCOPED_TRACE(name(dtype, n));
      std::vector<std::vector<float>> results;
      for (const int threads : testing::kThreadCounts) {
        const testing::ParallelThreads scope(threads);
        HostBuffer x(dtype, n, 61), y(dtype, n, 62);
        HostBuffer cast_to(DType::kF32, n, 63);
        ops.scale(y.tensor, 0.37f);
        ops.axpby(1.5f, x.tensor, -0.25f, y.tensor);
        ops.cast(y.tensor, cast_to.tensor);
        results.push_back(cast_to.as_f32());
      }
      for (std::size_t i = 1; i < results.size(); ++i) {
        EXPECT_EQ(
            0, std::memcmp(results[i].data(), results[0].data(), results[0].size() * sizeof(float)))
            << testing::kThreadCounts[i] << " threads";
      }
    }
  }
}

TEST(CpuDeviceOps, CopyAndFillZeroBytes) {
  DeviceOps& ops = cpu_device_ops();
  HostBuffer src(DType::kBF16, 1025, 51);
  HostBuffer dst(DType::kBF16, 1025, 52);
  ops.copy(src.tensor, dst.tensor);
  EXPECT_EQ(src.as_f32(), dst.as_f32());
  ops.fill_zero_bytes(dst.tensor);
  for (float v : dst.as_f32()) ASSERT_EQ(v, 0.0f);
  HostBuffer other(DType::kF32, 1025, 53);
  EXPECT_THROW(ops.copy(src.tensor, other.tensor), InternalError);
}

// Zeroing runs in parallel_for's chunks of bytes: a buffer of several chunks, with a short
// last one, is zeroed whole on two threads, and the bytes past its end are left alone.
TEST(CpuDeviceOps, FillZeroBytesZeroesEveryChunkAndNothingPast) {
  const int threads_before = parallel_threads();
  set_parallel_threads(2);
  for (const DType dtype : {DType::kF32, DType::kBF16}) {
    HostBuffer buffer(dtype, 100003, 54);  // 4 chunks of f32, 2 of bf16, the last one short
    std::fill(buffer.bytes.end() - 4, buffer.bytes.end(), 0xAB);
    const std::vector<unsigned char> tail(buffer.bytes.end() - 4, buffer.bytes.end());
    cpu_device_ops().fill_zero_bytes(buffer.tensor);
    for (float v : buffer.as_f32()) ASSERT_EQ(v, 0.0f);
    EXPECT_EQ(std::vector<unsigned char>(buffer.bytes.end() - 4, buffer.bytes.end()), tail);
  }
  set_parallel_threads(threads_before);
}

// A copy on a worker stream runs there, in order, after the caller let go of its tensors
// (the copy keeps their storage), and is done once the stream is synchronized.
TEST(CpuDeviceOps, CopyOnAWorkerStreamRunsThereKeepingItsTensorsAlive) {
  DeviceOps& ops = cpu_device_ops();
  MemoryTracker tracker(Device::cpu());
  CpuWorkerStream stream("copies");
  Tensor dst = Tensor::zeros(Shape{4096}, DType::kF32, tracker, MemoryCategory::kWorkspace);
  {
    Tensor src = Tensor::empty(Shape{4096}, DType::kF32, tracker, MemoryCategory::kWorkspace);
    for (std::int64_t i = 0; i < 4096; ++i) src.data_as<float>()[i] = static_cast<float>(i);
    Tensor first_half = dst.view(0, Shape{2048});
    ops.copy_on(src.view(0, Shape{2048}), first_half, stream);
    ops.copy_on(src.view(2048, Shape{2048}), dst.view(2048, Shape{2048}), stream);
  }  // src is gone here; the queued copies still hold its storage
  stream.synchronize();
  for (std::int64_t i = 0; i < 4096; ++i) ASSERT_EQ(dst.data_as<float>()[i], static_cast<float>(i));
  EXPECT_EQ(tracker.snapshot().current_bytes[static_cast<std::size_t>(MemoryCategory::kWorkspace)],
            4096 * 4)
      << "the source was freed once the copies ran";
  HostBuffer other(DType::kBF16, 16, 54);
  EXPECT_THROW(ops.copy_on(other.tensor, dst.view(0, Shape{16}), stream), InternalError);
}

}  // namespace
}  // namespace zt
