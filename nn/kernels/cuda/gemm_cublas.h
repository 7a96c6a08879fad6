// Row-major GEMM on cuBLAS with fp32 accumulation, for f32 and bf16 inputs (bf16 runs on
// tensor cores), and the RAII owner of a cuBLAS handle.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace zt::nn::cuda {

// Owns one cuBLAS handle bound to one stream. A handle is not thread safe: one per thread
// (or per stream) that issues GEMMs. Creating one needs a CUDA device and throws
// CublasError without one.
class CublasHandle {
 public:
  // `stream` is a cudaStream_t; nullptr is the default stream.
  explicit CublasHandle(void* stream = nullptr);
  ~CublasHandle();
  CublasHandle(CublasHandle&& other) noexcept;
  CublasHandle& operator=(CublasHandle&& other) noexcept;
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  void set_stream(void* stream);
  // GEMMs from now on take their scratch from `bytes` at `workspace` (device memory the caller
  // keeps alive while they are enqueued) instead of cuBLAS's own pool. set_stream resets it.
  void set_workspace(void* workspace, std::int64_t bytes);
  // The cublasHandle_t, as void* so that this header names no CUDA type.
  void* native() const { return handle_; }

 private:
  void* handle_ = nullptr;
};

// C (m, n) = alpha * op(A) (m, k) * op(B) (k, n) + beta * C, all row-major device matrices,
// as cpu::gemm_f32. op(X) is X or X^T; lda/ldb/ldc are the row strides as stored. Products
// accumulate in fp32 (CUBLAS_COMPUTE_32F; no TF32 for f32 inputs). Enqueued on the handle's
// stream. Instantiated for (In, Out) = (float, float), (BF16, float) and (BF16, BF16).
// m or n == 0 does nothing; dimensions and strides must fit in int (checked).
template <typename In, typename Out>
void gemm(CublasHandle& handle, bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
          std::int64_t k, float alpha, const In* a, std::int64_t lda, const In* b, std::int64_t ldb,
          float beta, Out* c, std::int64_t ldc);

// `batch` GEMMs as above, the i-th on a + i * stride_a, b + i * stride_b, c + i * stride_c
// (strides in elements): the heads of attention, which sit side by side in one buffer.
// Instantiated for (float, float).
template <typename In, typename Out>
void gemm_strided_batched(CublasHandle& handle, bool transpose_a, bool transpose_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, float alpha, const In* a,
                          std::int64_t lda, std::int64_t stride_a, const In* b, std::int64_t ldb,
                          std::int64_t stride_b, float beta, Out* c, std::int64_t ldc,
                          std::int64_t stride_c, std::int64_t batch);

}  // namespace zt::nn::cuda
