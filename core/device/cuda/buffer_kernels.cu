// Grid-stride CUDA loops over the per-element functions of core/device/math/buffer_math.h,
// for f32, bf16 and f16 storage (computed in fp32, rounded once into the destination).
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "core/device/cuda/buffer_kernels_internal.h"
#include "core/device/cuda/cuda_check.h"
#include "core/device/math/buffer_math.h"

namespace zt::cuda_kernels {
namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int kWarpSize = 32;
constexpr std::int64_t kMaxBlocks = 65535;

int blocks_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<int>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

// Launch errors (bad configuration, no device) surface here; faults inside a kernel surface
// at the next synchronizing call.
void check_launch(const char* kernel, std::int64_t n) {
  ZT_CORE_CUDA_CHECK(cudaGetLastError(),
                     std::string(kernel) + " launch, " + std::to_string(n) + " elements");
}

__device__ __forceinline__ std::int64_t first_index() {
  return blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_stride() {
  return std::int64_t{gridDim.x} * blockDim.x;
}

template <typename T>
__global__ void fill_kernel(T* values, std::int64_t n, float value) {
  const T stored(value);
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) values[i] = stored;
}

template <typename T>
__global__ void scale_kernel(T* values, std::int64_t n, float factor) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    values[i] = T(buffer_math::scaled(static_cast<float>(values[i]), factor));
  }
}

template <typename X, typename Y>
__global__ void axpby_kernel(float alpha, const X* x, float beta, Y* y, std::int64_t n) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    // With beta == 0, y is not loaded: its old contents may be NaN.
    const float old_y = beta == 0.0f ? 0.0f : static_cast<float>(y[i]);
    y[i] = Y(buffer_math::axpby(alpha, static_cast<float>(x[i]), beta, old_y));
  }
}

template <typename S, typename D>
__global__ void cast_kernel(const S* src, D* dst, std::int64_t n) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    dst[i] = D(static_cast<float>(src[i]));
  }
}

// Each thread sums its grid-stride share in double, then the block adds its threads in a
// fixed tree (warp butterflies, then the warps' sums by one warp): no atomics, so the order
// of additions is the same on every run.
template <typename T>
__global__ void sum_of_squares_kernel(const T* values, std::int64_t n, double* partials) {
  __shared__ double warp_sums[kThreadsPerBlock / kWarpSize];
  double sum = 0.0;
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    sum += buffer_math::square(static_cast<float>(values[i]));
  }
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, offset);
  }
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = lane < kThreadsPerBlock / kWarpSize ? warp_sums[lane] : 0.0;
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
      sum += __shfl_xor_sync(0xFFFFFFFFu, sum, offset);
    }
    if (lane == 0) partials[blockIdx.x] = sum;
  }
}

// Calls fn(T*) with `data` as the storage type of `dtype`.
template <typename Fn>
void with_storage(DType dtype, void* data, Fn&& fn) {
  switch (dtype) {
    case DType::kF32:
      fn(static_cast<float*>(data));
      return;
    case DType::kBF16:
      fn(static_cast<BF16*>(data));
      return;
    case DType::kF16:
      fn(static_cast<F16*>(data));
      return;
    case DType::kI32:
      break;
  }
  ZT_CHECK(false, "a device op on a non-floating dtype");
}

// One thread: the partials in block order, as the host used to add them.
__global__ void sum_partials_kernel(const double* partials, int blocks, double* sum) {
  double total = 0.0;
  for (int block = 0; block < blocks; ++block) total += partials[block];
  *sum = total;
}

}  // namespace

void fill(void* values, DType dtype, std::int64_t n, float value, void* stream) {
  if (n == 0) return;
  with_storage(dtype, values, [&](auto* typed) {
    fill_kernel<<<blocks_for(n), kThreadsPerBlock, 0, as_stream(stream)>>>(typed, n, value);
  });
  check_launch("fill_kernel", n);
}

void scale(void* values, DType dtype, std::int64_t n, float factor, void* stream) {
  if (n == 0) return;
  with_storage(dtype, values, [&](auto* typed) {
    scale_kernel<<<blocks_for(n), kThreadsPerBlock, 0, as_stream(stream)>>>(typed, n, factor);
  });
  check_launch("scale_kernel", n);
}

void axpby(float alpha, const void* x, DType x_dtype, float beta, void* y, DType y_dtype,
           std::int64_t n, void* stream) {
  if (n == 0) return;
  with_storage(x_dtype, const_cast<void*>(x), [&](auto* typed_x) {
    with_storage(y_dtype, y, [&](auto* typed_y) {
      axpby_kernel<<<blocks_for(n), kThreadsPerBlock, 0, as_stream(stream)>>>(
          alpha, static_cast<const std::remove_pointer_t<decltype(typed_x)>*>(typed_x), beta,
          typed_y, n);
    });
  });
  check_launch("axpby_kernel", n);
}

void cast(const void* src, DType src_dtype, void* dst, DType dst_dtype, std::int64_t n,
          void* stream) {
  if (n == 0) return;
  with_storage(src_dtype, const_cast<void*>(src), [&](auto* typed_src) {
    with_storage(dst_dtype, dst, [&](auto* typed_dst) {
      cast_kernel<<<blocks_for(n), kThreadsPerBlock, 0, as_stream(stream)>>>(
          static_cast<const std::remove_pointer_t<decltype(typed_src)>*>(typed_src), typed_dst, n);
    });
  });
  check_launch("cast_kernel", n);
}

int sum_of_squares_blocks(std::int64_t n) {
  const std::int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<int>(blocks < kMaxSumOfSquaresBlocks ? blocks : kMaxSumOfSquaresBlocks);
}

void sum_of_squares_partials(const void* values, DType dtype, std::int64_t n, double* partials,
                             void* stream) {
  if (n == 0) return;
  with_storage(dtype, const_cast<void*>(values), [&](auto* typed) {
    sum_of_squares_kernel<<<sum_of_squares_blocks(n), kThreadsPerBlock, 0, as_stream(stream)>>>(
        static_cast<const std::remove_pointer_t<decltype(typed)>*>(typed), n, partials);
  });
  check_launch("sum_of_squares_kernel", n);
}

void sum_partials(const double* partials, int blocks, double* sum, void* stream) {
  sum_partials_kernel<<<1, 1, 0, as_stream(stream)>>>(partials, blocks, sum);
  check_launch("sum_partials_kernel", blocks);
}

}  // namespace zt::cuda_kernels
