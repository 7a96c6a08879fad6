// Every CUDA DeviceOp against CpuDeviceOps on the same data, for f32, bf16 and f16 at sizes 0,
// 1, 22 and 2^20 + 3: element-wise ops bitwise (Note [No contraction on the device]), sums of
// squares to round-off and bitwise stable from call to call. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/device/cpu_device_ops.h"
#include "core/device/device_context.h"
#include "core/random.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt {
namespace {

constexpr std::int64_t kSizes[] = {0, 1, 22, (1 << 20) + 3};
constexpr DType kDtypes[] = {DType::kF32, DType::kBF16, DType::kF16};

// Host storage of `n` seeded elements of `dtype`.
struct HostValues {
  HostValues(DType dtype_in, std::int64_t n, std::uint64_t key)
      : dtype(dtype_in), bytes(static_cast<std::size_t>(n) * dtype_size(dtype_in) + 4) {
    std::vector<float> values(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = 3.0f * standard_normal(key, i);
    if (n > 0) convert_elements(values.data(), DType::kF32, bytes.data(), dtype, values.size());
    tensor = Tensor::wrap(bytes.data(), Shape({n}), dtype);
  }
  DType dtype;
  std::vector<unsigned char> bytes;
  Tensor tensor;
};

class CudaDeviceOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ZT_SKIP_WITHOUT_GPU();
    context_ = make_device_context(Device::cuda(0));
  }
  // A device tensor holding `host`'s elements.
  Tensor upload(const HostValues& host) {
    Tensor t = Tensor::empty(host.tensor.shape(), host.dtype, context_->tracker(),
                             MemoryCategory::kWorkspace);
    context_->ops().copy(host.tensor, t);
    return t;
  }
  // `device`'s bytes, after the compute stream's work.
  std::vector<unsigned char> download(const Tensor& device) {
    std::vector<unsigned char> bytes(device.nbytes() + 4);
    context_->ops().copy(device, Tensor::wrap(bytes.data(), device.shape(), device.dtype()));
    context_->synchronize();
    return bytes;
  }
  std::unique_ptr<DeviceContext> context_;
};

std::string name(DType dtype, std::int64_t n) {
  return std::string(dtype_name(dtype)) + " n=" + std::to_string(n);
}

TEST_F(CudaDeviceOpsTest, FillScaleAndFillZeroBytesMatchTheCpuBitwise) {
  for (DType dtype : kDtypes) {
    for (std::int64_t n : kSizes) {
      SCOPED_TRACE(name(dtype, n));
      HostValues host(dtype, n, 61);
      Tensor device = upload(host);
      context_->ops().scale(device, -0.37f);
      cpu_device_ops().scale(host.tensor, -0.37f);
      EXPECT_EQ(download(device), host.bytes);
      context_->ops().fill(device, 1.3f);
      cpu_device_ops().fill(host.tensor, 1.3f);
      EXPECT_EQ(download(device), host.bytes);
      context_->ops().fill_zero_bytes(device);
      cpu_device_ops().fill_zero_bytes(host.tensor);
      EXPECT_EQ(download(device), host.bytes);
    }
  }
}

TEST_F(CudaDeviceOpsTest, AxpbyAndCastMatchTheCpuBitwiseAcrossDtypes) {
  for (DType x_dtype : kDtypes) {
    for (DType y_dtype : kDtypes) {
      for (std::int64_t n : kSizes) {
        SCOPED_TRACE(name(x_dtype, n) + " -> " + std::string(dtype_name(y_dtype)));
        HostValues x(x_dtype, n, 71);
        HostValues y(y_dtype, n, 72);
        Tensor x_device = upload(x);
        Tensor y_device = upload(y);
        context_->ops().axpby(0.9f, x_device, -1.7f, y_device);
        cpu_device_ops().axpby(0.9f, x.tensor, -1.7f, y.tensor);
        EXPECT_EQ(download(y_device), y.bytes);
        context_->ops().cast(x_device, y_device);
        cpu_device_ops().cast(x.tensor, y.tensor);
        EXPECT_EQ(download(y_device), y.bytes);
      }
    }
  }
}

TEST_F(CudaDeviceOpsTest, AxpbyWithBetaZeroIgnoresNanInY) {
  for (DType dtype : kDtypes) {
    SCOPED_TRACE(dtype_name(dtype));
    HostValues x(DType::kF32, 5000, 81);
    HostValues y(dtype, 5000, 82);
    Tensor y_device = upload(y);
    context_->ops().fill(y_device, std::numeric_limits<float>::quiet_NaN());
    context_->ops().axpby(2.5f, upload(x), 0.0f, y_device);
    cpu_device_ops().axpby(2.5f, x.tensor, 0.0f, y.tensor);
    EXPECT_EQ(download(y_device), y.bytes);
  }
}

TEST_F(CudaDeviceOpsTest, SumOfSquaresMatchesTheCpuAndIsStable) {
  for (DType dtype : kDtypes) {
    for (std::int64_t n : kSizes) {
      SCOPED_TRACE(name(dtype, n));
      HostValues host(dtype, n, 91);
      Tensor device = upload(host);
      const double want = cpu_device_ops().sum_of_squares(host.tensor);
      const double got = context_->ops().sum_of_squares(device);
      EXPECT_NEAR(got, want, 1e-12 * want);
      EXPECT_EQ(context_->ops().sum_of_squares(device), got) << "not deterministic";
    }
  }
}

TEST_F(CudaDeviceOpsTest, CopiesBetweenPinnedHostAndDevice) {
  HostValues host(DType::kF32, 4096, 101);
  Tensor device = upload(host);
  MemoryTracker staging(context_->host_staging_allocator());
  Tensor staged = Tensor::empty(Shape({4096}), DType::kF32, staging, MemoryCategory::kHostOffload);
  context_->ops().copy(device, staged);
  context_->synchronize();  // a pinned copy is asynchronous
  EXPECT_EQ(std::memcmp(staged.data(), host.bytes.data(), 4096 * 4), 0);
}

}  // namespace
}  // namespace zt
