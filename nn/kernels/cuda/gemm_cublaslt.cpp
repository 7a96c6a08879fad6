// cuBLASLt GEMMs with epilogues. Row-major as gemm_cublas.cpp (Note [Row-major on cuBLAS]):
// the operands are swapped, so cuBLASLt's column-major D (n, m) is our row-major C (m, n); its
// row vectors (BIAS, GELU's bias, DGELU_BGRAD's gradient) run along our columns, and its
// BGRADB (a reduction of its B over k) reduces our op(A) over k.
#include "nn/kernels/cuda/gemm_cublaslt.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/error.h"
#include "nn/kernels/cuda/cublas_check.h"
#include "nn/kernels/cuda/cuda_data_type_internal.h"

namespace zt::nn::cuda {
namespace {

// The descriptors of one call, destroyed when it returns (cuBLASLt copies what it needs at
// enqueue time).
class LtDescriptors {
 public:
  LtDescriptors() = default;
  ~LtDescriptors() {
    if (preference != nullptr) cublasLtMatmulPreferenceDestroy(preference);
    for (cublasLtMatrixLayout_t layout : {a, b, c}) {
      if (layout != nullptr) cublasLtMatrixLayoutDestroy(layout);
    }
    if (matmul != nullptr) cublasLtMatmulDescDestroy(matmul);
  }
  LtDescriptors(const LtDescriptors&) = delete;
  LtDescriptors& operator=(const LtDescriptors&) = delete;

  cublasLtMatmulDesc_t matmul = nullptr;
  cublasLtMatrixLayout_t a = nullptr;  // cuBLASLt's A: our B
  cublasLtMatrixLayout_t b = nullptr;  // cuBLASLt's B: our A
  cublasLtMatrixLayout_t c = nullptr;  // C and D
  cublasLtMatmulPreference_t preference = nullptr;
};

cublasLtEpilogue_t lt_epilogue(const LtEpilogue& e) {
  switch (e.kind) {
    case LtEpilogue::Kind::kNone:
      return CUBLASLT_EPILOGUE_DEFAULT;
    case LtEpilogue::Kind::kBias:
      return e.bias != nullptr ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case LtEpilogue::Kind::kGelu:
      return e.bias != nullptr ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
    case LtEpilogue::Kind::kGeluBackward:
      return e.bias_grad != nullptr ? CUBLASLT_EPILOGUE_DGELU_BGRAD : CUBLASLT_EPILOGUE_DGELU;
    case LtEpilogue::Kind::kBiasGradFromA:
      return CUBLASLT_EPILOGUE_BGRADB;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

const char* epilogue_name(cublasLtEpilogue_t e) {
  switch (e) {
    case CUBLASLT_EPILOGUE_BIAS:
      return "BIAS";
    case CUBLASLT_EPILOGUE_GELU_AUX:
      return "GELU_AUX";
    case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
      return "GELU_AUX_BIAS";
    case CUBLASLT_EPILOGUE_DGELU:
      return "DGELU";
    case CUBLASLT_EPILOGUE_DGELU_BGRAD:
      return "DGELU_BGRAD";
    case CUBLASLT_EPILOGUE_BGRADB:
      return "BGRADB";
    default:
      return "DEFAULT";
  }
}

// The largest power of two (up to 256) dividing the address: cuBLASLt assumes 256-byte
// aligned buffers unless told, and our operands are views into flat buffers.
std::uint32_t alignment_of(const void* pointer) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  std::uint32_t alignment = 256;
  while (alignment > 1 && address % alignment != 0) alignment /= 2;
  return alignment;
}

template <typename T>
void set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const T& value,
         const std::string& context) {
  ZT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)), context);
}

void set_alignment(cublasLtMatmulPreference_t preference,
                   cublasLtMatmulPreferenceAttributes_t attribute, const void* pointer,
                   const std::string& context) {
  const std::uint32_t alignment = alignment_of(pointer);
  ZT_CUBLAS_CHECK(
      cublasLtMatmulPreferenceSetAttribute(preference, attribute, &alignment, sizeof(alignment)),
      context);
}

std::uint64_t checked_u64(std::int64_t value, const char* what) {
  ZT_CHECK(value >= 0, std::string("gemm_lt: negative ") + what);
  return static_cast<std::uint64_t>(value);
}

}  // namespace

template <typename In, typename Out>
void gemm_lt(CublasHandle& handle, void* stream, bool transpose_a, bool transpose_b, std::int64_t m,
             std::int64_t n, std::int64_t k, float alpha, const In* a, std::int64_t lda,
             const In* b, std::int64_t ldb, float beta, Out* c, std::int64_t ldc,
             const LtEpilogue& epilogue, void* workspace, std::size_t workspace_bytes) {
  if (m == 0 || n == 0) return;
  ZT_CHECK(lda >= (transpose_a ? m : k) && ldb >= (transpose_b ? k : n) && ldc >= n,
           "gemm_lt: a row stride is shorter than its matrix's row");
  const cublasLtEpilogue_t lt = lt_epilogue(epilogue);
  const std::string context = std::string("cuBLASLt gemm (") + std::to_string(m) + ", " +
                              std::to_string(n) + ", " + std::to_string(k) + ")" +
                              (transpose_a ? " A^T" : "") + (transpose_b ? " B^T" : "") +
                              ", epilogue " + epilogue_name(lt);
  // Handle: a cublasHandle_t is a valid cublasLtHandle_t (documented by cuBLASLt).
  const auto lt_handle = static_cast<cublasLtHandle_t>(handle.native());
  LtDescriptors d;
  ZT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&d.matmul, CUBLAS_COMPUTE_32F, CUDA_R_32F), context);
  // See the file comment: cuBLASLt's A is our B and its B our A.
  const cublasOperation_t op_a = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  set(d.matmul, CUBLASLT_MATMUL_DESC_TRANSA, op_a, context);
  set(d.matmul, CUBLASLT_MATMUL_DESC_TRANSB, op_b, context);
  // Column-major shapes as stored: our B is (k, n) row-major, so (n, k) column-major.
  ZT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d.a, detail::cuda_data_type<In>(),
                                             checked_u64(transpose_b ? k : n, "k"),
                                             checked_u64(transpose_b ? n : k, "n"), ldb),
                  context);
  ZT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d.b, detail::cuda_data_type<In>(),
                                             checked_u64(transpose_a ? m : k, "m"),
                                             checked_u64(transpose_a ? k : m, "k"), lda),
                  context);
  ZT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d.c, detail::cuda_data_type<Out>(),
                                             checked_u64(n, "n"), checked_u64(m, "m"), ldc),
                  context);
  set(d.matmul, CUBLASLT_MATMUL_DESC_EPILOGUE, lt, context);
  if (epilogue.bias != nullptr)
    set(d.matmul, CUBLASLT_MATMUL_DESC_BIAS_POINTER, epilogue.bias, context);
  if (epilogue.bias_grad != nullptr) {
    set(d.matmul, CUBLASLT_MATMUL_DESC_BIAS_POINTER, epilogue.bias_grad, context);
  }
  if (epilogue.kind == LtEpilogue::Kind::kGelu ||
      epilogue.kind == LtEpilogue::Kind::kGeluBackward) {
    ZT_CHECK(epilogue.aux != nullptr && ldc % 8 == 0,
             context + ": the GELU aux matrix needs a row stride that is a multiple of 8");
    set(d.matmul, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, epilogue.aux, context);
    set(d.matmul, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, ldc, context);
  }

  ZT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&d.preference), context);
  const std::uint64_t max_workspace = workspace_bytes;
  ZT_CUBLAS_CHECK(
      cublasLtMatmulPreferenceSetAttribute(d.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                           &max_workspace, sizeof(max_workspace)),
      context);
  set_alignment(d.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, b, context);
  set_alignment(d.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, a, context);
  set_alignment(d.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, c, context);
  set_alignment(d.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, c, context);

  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  ZT_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt_handle, d.matmul, d.a, d.b, d.c, d.c,
                                                 d.preference, 1, &heuristic, &found),
                  context);
  if (found == 0) {
    throw CublasError(context + ": cuBLASLt has no algorithm for these types, alignments and " +
                      "this epilogue within " + std::to_string(workspace_bytes) +
                      " bytes of workspace");
  }
  ZT_CUBLAS_CHECK(cublasLtMatmul(lt_handle, d.matmul, &alpha, b, d.a, a, d.b, &beta, c, d.c, c, d.c,
                                 &heuristic.algo, workspace, workspace_bytes,
                                 static_cast<cudaStream_t>(stream)),
                  context);
}

#define ZT_INSTANTIATE(In, Out)                                                                \
  template void gemm_lt<In, Out>(CublasHandle&, void*, bool, bool, std::int64_t, std::int64_t, \
                                 std::int64_t, float, const In*, std::int64_t, const In*,      \
                                 std::int64_t, float, Out*, std::int64_t, const LtEpilogue&,   \
                                 void*, std::size_t);
ZT_INSTANTIATE(float, float)
ZT_INSTANTIATE(BF16, float)
ZT_INSTANTIATE(BF16, BF16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cuda
