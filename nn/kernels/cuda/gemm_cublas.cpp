// Row-major GEMM on cuBLAS (cublasGemmEx, fp32 compute) and the cuBLAS handle owner.
// Note [Row-major on cuBLAS]: cuBLAS is column-major, and a row-major (r, c) matrix with row
// stride ld is the column-major (c, r) matrix with leading dimension ld. So row-major
// C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands and m with n.
#include "nn/kernels/cuda/gemm_cublas.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <limits>
#include <string>
#include <utility>

#include "core/error.h"
#include "nn/kernels/cuda/cublas_check.h"
#include "nn/kernels/cuda/cuda_data_type_internal.h"

namespace zt::nn::cuda {
namespace {

cublasHandle_t as_cublas(void* handle) { return static_cast<cublasHandle_t>(handle); }

int checked_int(std::int64_t value, const char* what) {
  ZT_CHECK(value >= 0 && value <= std::numeric_limits<int>::max(),
           std::string("gemm: ") + what + " = " + std::to_string(value) +
               " does not fit cublasGemmEx's int");
  return static_cast<int>(value);
}

}  // namespace

CublasHandle::CublasHandle(void* stream) {
  cublasHandle_t handle = nullptr;
  ZT_CUBLAS_CHECK(cublasCreate(&handle), "creating a cuBLAS handle");
  handle_ = handle;
  set_stream(stream);
}

CublasHandle::~CublasHandle() {
  // Destructors never throw; a failing destroy at teardown has nothing left to tell.
  if (handle_ != nullptr) cublasDestroy(as_cublas(handle_));
}

CublasHandle::CublasHandle(CublasHandle&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)) {}

CublasHandle& CublasHandle::operator=(CublasHandle&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) cublasDestroy(as_cublas(handle_));
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void CublasHandle::set_stream(void* stream) {
  ZT_CUBLAS_CHECK(cublasSetStream(as_cublas(handle_), static_cast<cudaStream_t>(stream)),
                  "binding the cuBLAS handle to a stream");
}

void CublasHandle::set_workspace(void* workspace, std::int64_t bytes) {
  ZT_CUBLAS_CHECK(
      cublasSetWorkspace(as_cublas(handle_), workspace, static_cast<std::size_t>(bytes)),
      "binding the cuBLAS handle to a workspace of " + std::to_string(bytes) + " bytes");
}

template <typename In, typename Out>
void gemm(CublasHandle& handle, bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
          std::int64_t k, float alpha, const In* a, std::int64_t lda, const In* b, std::int64_t ldb,
          float beta, Out* c, std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  // Row strides must cover the stored rows: A is (m, k) or, transposed, (k, m).
  ZT_CHECK(lda >= (transpose_a ? m : k) && ldb >= (transpose_b ? k : n) && ldc >= n,
           "gemm: a row stride is shorter than its matrix's row");
  const std::string context = "gemm (" + std::to_string(m) + ", " + std::to_string(n) + ", " +
                              std::to_string(k) + ")" + (transpose_a ? " A^T" : "") +
                              (transpose_b ? " B^T" : "");
  // See Note [Row-major on cuBLAS]: B comes first, and n before m.
  ZT_CUBLAS_CHECK(cublasGemmEx(as_cublas(handle.native()), transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                               transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, checked_int(n, "n"),
                               checked_int(m, "m"), checked_int(k, "k"), &alpha, b,
                               detail::cuda_data_type<In>(), checked_int(ldb, "ldb"), a,
                               detail::cuda_data_type<In>(), checked_int(lda, "lda"), &beta, c,
                               detail::cuda_data_type<Out>(), checked_int(ldc, "ldc"),
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                  context);
}

template <typename In, typename Out>
void gemm_strided_batched(CublasHandle& handle, bool transpose_a, bool transpose_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, float alpha, const In* a,
                          std::int64_t lda, std::int64_t stride_a, const In* b, std::int64_t ldb,
                          std::int64_t stride_b, float beta, Out* c, std::int64_t ldc,
                          std::int64_t stride_c, std::int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return;
  ZT_CHECK(lda >= (transpose_a ? m : k) && ldb >= (transpose_b ? k : n) && ldc >= n,
           "gemm: a row stride is shorter than its matrix's row");
  const std::string context = "batched gemm " + std::to_string(batch) + " x (" + std::to_string(m) +
                              ", " + std::to_string(n) + ", " + std::to_string(k) + ")" +
                              (transpose_a ? " A^T" : "") + (transpose_b ? " B^T" : "");
  // See Note [Row-major on cuBLAS]: B comes first, and n before m.
  ZT_CUBLAS_CHECK(
      cublasGemmStridedBatchedEx(
          as_cublas(handle.native()), transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
          transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, checked_int(n, "n"), checked_int(m, "m"),
          checked_int(k, "k"), &alpha, b, detail::cuda_data_type<In>(), checked_int(ldb, "ldb"),
          stride_b, a, detail::cuda_data_type<In>(), checked_int(lda, "lda"), stride_a, &beta, c,
          detail::cuda_data_type<Out>(), checked_int(ldc, "ldc"), stride_c,
          checked_int(batch, "batch"), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      context);
}

template void gemm_strided_batched<float, float>(CublasHandle&, bool, bool, std::int64_t,
                                                 std::int64_t, std::int64_t, float, const float*,
                                                 std::int64_t, std::int64_t, const float*,
                                                 std::int64_t, std::int64_t, float, float*,
                                                 std::int64_t, std::int64_t, std::int64_t);

#define ZT_INSTANTIATE(In, Out)                                                                    \
  template void gemm<In, Out>(CublasHandle&, bool, bool, std::int64_t, std::int64_t, std::int64_t, \
                              float, const In*, std::int64_t, const In*, std::int64_t, float,      \
                              Out*, std::int64_t);
ZT_INSTANTIATE(float, float)
ZT_INSTANTIATE(BF16, float)
ZT_INSTANTIATE(BF16, BF16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cuda
