// Helpers for the CUDA-versus-CPU tests: the skip without a GPU, an RAII device buffer,
// seeded inputs in f32 or bf16 storage, and element-wise comparison with a tolerance.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/random.h"

namespace zt::gpu_test {

inline bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// First statement of every GPU test: CI has nvcc but no GPU, so there the tests skip.
#define ZT_SKIP_WITHOUT_GPU()                                                   \
  do {                                                                          \
    if (!::zt::gpu_test::have_gpu()) {                                          \
      GTEST_SKIP() << "no CUDA device visible (cudaGetDeviceCount found none)"; \
    }                                                                           \
  } while (0)

inline void check(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess) {
    throw std::runtime_error("test: " + what + ": " + cudaGetErrorString(status));
  }
}

// Owns `count` elements of device memory (at least one, so that size 0 still has a pointer).
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    void* ptr = nullptr;
    check(cudaMalloc(&ptr, (count == 0 ? 1 : count) * sizeof(T)),
          "cudaMalloc " + std::to_string(count) + " elements");
    ptr_ = static_cast<T*>(ptr);
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    check(cudaMemcpy(ptr_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice),
          "cudaMemcpy to device");
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() { return ptr_; }
  // Waits for the work on the default stream (every test enqueues there), then copies back.
  std::vector<T> download() const {
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize before download");
    std::vector<T> host(count_);
    check(cudaMemcpy(host.data(), ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost),
          "cudaMemcpy to host");
    return host;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_;
};

// Per storage type: its name in test names and the relative tolerance of one rounding to it.
template <typename T>
struct Storage;
template <>
struct Storage<float> {
  static constexpr const char* kName = "f32";
  static constexpr double kRoundingRel = 0.0;
};
template <>
struct Storage<BF16> {
  static constexpr const char* kName = "bf16";
  static constexpr double kRoundingRel = 1.0 / 128;  // 2^-7: two bf16 roundings apart at most
};
struct StorageNames {
  template <typename T>
  static std::string GetName(int) {
    return Storage<T>::kName;
  }
};
using StorageTypes = ::testing::Types<float, BF16>;

// n seeded normal values times `scale`, rounded to what T can hold so that the CPU reference
// and the device see the same numbers.
template <typename T>
std::vector<float> inputs(std::size_t n, std::uint64_t key, float scale = 1.0f) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = static_cast<float>(T(scale * standard_normal(key, i)));
  }
  return values;
}

template <typename T>
std::vector<T> to_storage(const std::vector<float>& values) {
  std::vector<T> out;
  out.reserve(values.size());
  for (float v : values) out.push_back(T(v));
  return out;
}

template <typename T>
std::vector<float> to_float(const std::vector<T>& values) {
  std::vector<float> out;
  out.reserve(values.size());
  for (const T& v : values) out.push_back(static_cast<float>(v));
  return out;
}

// Element-wise |got - want| <= abs + rel * |want|; reports the first mismatch and the count.
inline ::testing::AssertionResult all_near(const std::vector<float>& got,
                                           const std::vector<float>& want, double rel, double abs) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << got.size() << " vs " << want.size();
  }
  std::size_t bad = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(diff <= abs + rel * std::fabs(static_cast<double>(want[i])))) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << got.size() << " elements differ; first at " << first << ": got "
         << got[first] << ", want " << want[first] << " (rel " << rel << ", abs " << abs << ")";
}

}  // namespace zt::gpu_test
