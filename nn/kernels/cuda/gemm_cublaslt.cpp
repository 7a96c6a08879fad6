// cuBLASLt GEMMs with epilogues, and the same arithmetic unfused where cuBLASLt offers no
// algorithm (Note [Fused when offered] in nn/kernels/gemm_plan_cache.h). Row-major as
// gemm_cublas.cpp (Note [Row-major on cuBLAS]): the operands are swapped, so cuBLASLt's
// column-major D (n, m) is our row-major C (m, n); its row vectors (BIAS, GELU's bias,
// DGELU_BGRAD's gradient) run along our columns, and its BGRADB (a reduction of its B over k)
// reduces our op(A) over k.
#include "nn/kernels/cuda/gemm_cublaslt.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/error.h"
#include "nn/kernels/cuda/activation_cuda.h"
#include "nn/kernels/cuda/bias_cuda.h"
#include "nn/kernels/cuda/cublas_check.h"
#include "nn/kernels/cuda/cuda_check.h"

namespace zt::nn::cuda {

// The descriptors and algorithm of one fused call, kept for every call of its key. The
// pointer attributes (bias, bias gradient, aux) are bound per call, so a plan is used by one
// thread at a time: the backend calls gemm_lt under its cuBLAS handle's lock.
struct LtPlan {
  LtPlan() = default;
  ~LtPlan() {
    for (cublasLtMatrixLayout_t layout : {a, b, c}) {
      if (layout != nullptr) cublasLtMatrixLayoutDestroy(layout);
    }
    if (matmul != nullptr) cublasLtMatmulDescDestroy(matmul);
  }
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;

  cublasLtMatmulDesc_t matmul = nullptr;
  cublasLtMatrixLayout_t a = nullptr;  // cuBLASLt's A: our B
  cublasLtMatrixLayout_t b = nullptr;  // cuBLASLt's B: our A
  cublasLtMatrixLayout_t c = nullptr;  // C and D
  cublasLtMatmulAlgo_t algo{};
};

namespace {

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

bool writes_bias_grad(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_DGELU_BGRAD || e == CUBLASLT_EPILOGUE_BGRADB;
}

bool has_aux(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_GELU_AUX || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS ||
         e == CUBLASLT_EPILOGUE_DGELU || e == CUBLASLT_EPILOGUE_DGELU_BGRAD;
}

cudaDataType_t cuda_data_type(DType dtype) {
  return dtype == DType::kBF16 ? CUDA_R_16BF : CUDA_R_32F;
}

template <typename T>
void set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const T& value,
         const std::string& context) {
  ZT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)), context);
}

template <typename T>
void prefer(cublasLtMatmulPreference_t preference, cublasLtMatmulPreferenceAttributes_t attribute,
            T value, const std::string& context) {
  ZT_CUBLAS_CHECK(
      cublasLtMatmulPreferenceSetAttribute(preference, attribute, &value, sizeof(value)), context);
}

// Owns a heuristic's preference for as long as the question is asked.
struct LtPreference {
  ~LtPreference() {
    if (preference != nullptr) cublasLtMatmulPreferenceDestroy(preference);
  }
  cublasLtMatmulPreference_t preference = nullptr;
};

// cuBLASLt's plan for `key`, or null when it offers no algorithm. Every operand's alignment
// is declared, so the algorithm offered is one that runs on these addresses.
std::unique_ptr<LtPlan> offer_plan(cublasLtHandle_t lt_handle, const GemmPlanKey& key,
                                   cublasLtEpilogue_t epilogue, const std::string& context) {
  // cuBLASLt reads the aux matrix in rows of 8 elements: another row stride is never fused.
  if (has_aux(epilogue) && key.ldc % 8 != 0) return nullptr;
  auto plan = std::make_unique<LtPlan>();
  ZT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->matmul, CUBLAS_COMPUTE_32F, CUDA_R_32F), context);
  // See the file comment: cuBLASLt's A is our B and its B our A.
  const cublasOperation_t op_a = key.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = key.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  set(plan->matmul, CUBLASLT_MATMUL_DESC_TRANSA, op_a, context);
  set(plan->matmul, CUBLASLT_MATMUL_DESC_TRANSB, op_b, context);
  set(plan->matmul, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue, context);
  if (writes_bias_grad(epilogue)) {
    // The bias gradient is an f32 sum (kernel_backend.h), not one rounded to the output type.
    set(plan->matmul, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, CUDA_R_32F, context);
  }
  if (has_aux(epilogue)) set(plan->matmul, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, key.ldc, context);
  // Column-major shapes as stored: our B is (k, n) row-major, so (n, k) column-major.
  const auto u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  const cudaDataType_t in = cuda_data_type(key.in_dtype);
  ZT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, in, u64(key.transpose_b ? key.k : key.n),
                                             u64(key.transpose_b ? key.n : key.k), key.ldb),
                  context);
  ZT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->b, in, u64(key.transpose_a ? key.m : key.k),
                                             u64(key.transpose_a ? key.k : key.m), key.lda),
                  context);
  ZT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->c, cuda_data_type(key.out_dtype), u64(key.n),
                                             u64(key.m), key.ldc),
                  context);

  LtPreference p;
  ZT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&p.preference), context);
  prefer(p.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, key.workspace_bytes, context);
  prefer(p.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.alignment_b_bytes, context);
  prefer(p.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.alignment_a_bytes, context);
  prefer(p.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.alignment_c_bytes, context);
  prefer(p.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.alignment_c_bytes, context);

  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(lt_handle, plan->matmul, plan->a, plan->b, plan->c, plan->c,
                                     p.preference, 1, &heuristic, &found);
  // NOT_SUPPORTED and INVALID_VALUE are how the heuristic answers a combination it has no
  // kernel for (an epilogue on these types, a bias type); anything else is a failure.
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || status == CUBLAS_STATUS_INVALID_VALUE)
    return nullptr;
  ZT_CUBLAS_CHECK(status, context);
  if (found == 0) return nullptr;
  plan->algo = heuristic.algo;
  return plan;
}

template <typename In, typename Out>
struct LtCall {
  bool transpose_a, transpose_b;
  std::int64_t m, n, k;
  float alpha;
  const In* a;
  std::int64_t lda;
  const In* b;
  std::int64_t ldb;
  float beta;
  Out* c;
  std::int64_t ldc;
  const LtEpilogue& epilogue;
};

// The epilogue as kernels after the plain cuBLAS GEMM, on the handle's stream: what cuBLASLt
// would have fused, with the bias gradient summed in f32 by bias_backward.
template <typename In, typename Out>
void run_unfused(CublasHandle& handle, void* stream, const LtCall<In, Out>& x,
                 const std::string& context) {
  const LtEpilogue& e = x.epilogue;
  const auto s = static_cast<cudaStream_t>(stream);
  const std::int64_t count = x.m * x.n;
  ZT_CHECK(lt_epilogue(e) == CUBLASLT_EPILOGUE_DEFAULT || x.ldc == x.n,
           context + ": the unfused epilogue needs a dense C (ldc == n)");
  Out* product = x.c;
  if (e.kind == LtEpilogue::Kind::kGelu) {
    product = static_cast<Out*>(e.aux);
    if (x.beta != 0.0f) {
      ZT_CUDA_CHECK(cudaMemcpyAsync(product, x.c, static_cast<std::size_t>(count) * sizeof(Out),
                                    cudaMemcpyDeviceToDevice, s),
                    context + ": C into aux");
    }
  }
  gemm<In, Out>(handle, x.transpose_a, x.transpose_b, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b,
                x.ldb, x.beta, product, x.ldc);
  const auto* bias = static_cast<const Out*>(e.bias);
  const auto zero_bias_grad = [&](std::int64_t elements) {
    ZT_CUDA_CHECK(
        cudaMemsetAsync(e.bias_grad, 0, static_cast<std::size_t>(elements) * sizeof(float), s),
        context + ": clearing the bias gradient");
  };
  switch (e.kind) {
    case LtEpilogue::Kind::kNone:
      break;
    case LtEpilogue::Kind::kBias:
      if (bias != nullptr) bias_add_forward<Out>(x.c, bias, x.m, x.n, stream);
      break;
    case LtEpilogue::Kind::kGelu:
      if (bias != nullptr) bias_add_forward<Out>(product, bias, x.m, x.n, stream);
      gelu_forward<Out>(product, x.c, count, stream);
      break;
    case LtEpilogue::Kind::kGeluBackward:
      gelu_backward<Out>(static_cast<const Out*>(e.aux), x.c, x.c, count, stream);
      if (e.bias_grad != nullptr) {
        zero_bias_grad(x.n);
        bias_backward<Out>(x.c, e.bias_grad, x.m, x.n, stream);
      }
      break;
    case LtEpilogue::Kind::kBiasGradFromA:
      // op(A) = A^T with A (k, m) dense: its row sums over k are A's column sums.
      ZT_CHECK(x.transpose_a && x.lda == x.m,
               context + ": the unfused BGRADB sums A^T of a dense A only");
      zero_bias_grad(x.m);
      bias_backward<In>(x.a, e.bias_grad, x.k, x.m, stream);
      break;
  }
}

}  // namespace

template <typename In, typename Out>
GemmPlanKey lt_plan_key(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                        std::int64_t k, const In* a, std::int64_t lda, const In* b,
                        std::int64_t ldb, const Out* c, std::int64_t ldc,
                        const LtEpilogue& epilogue, std::size_t workspace_bytes) {
  const cublasLtEpilogue_t lt = lt_epilogue(epilogue);
  GemmPlanKey key;
  key.m = m;
  key.n = n;
  key.k = k;
  key.transpose_a = transpose_a;
  key.transpose_b = transpose_b;
  key.lda = lda;
  key.ldb = ldb;
  key.ldc = ldc;
  key.in_dtype = dtype_of<In>();
  key.out_dtype = dtype_of<Out>();
  key.epilogue = epilogue_name(lt);
  key.bias_dtype = writes_bias_grad(lt) ? DType::kF32 : dtype_of<Out>();
  key.alignment_a_bytes = operand_alignment_bytes(a, lda, sizeof(In));
  key.alignment_b_bytes = operand_alignment_bytes(b, ldb, sizeof(In));
  key.alignment_c_bytes = operand_alignment_bytes(c, ldc, sizeof(Out));
  key.workspace_bytes = workspace_bytes;
  return key;
}

template <typename In, typename Out>
void gemm_lt(CublasHandle& handle, LtPlans& plans, void* stream, bool transpose_a, bool transpose_b,
             std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const In* a,
             std::int64_t lda, const In* b, std::int64_t ldb, float beta, Out* c, std::int64_t ldc,
             const LtEpilogue& epilogue, void* workspace, std::size_t workspace_bytes) {
  if (m == 0 || n == 0) return;
  ZT_CHECK(m > 0 && n > 0 && k >= 0, "gemm_lt: negative dimensions");
  ZT_CHECK(lda >= (transpose_a ? m : k) && ldb >= (transpose_b ? k : n) && ldc >= n,
           "gemm_lt: a row stride is shorter than its matrix's row");
  ZT_CHECK(epilogue.kind != LtEpilogue::Kind::kGelu || epilogue.aux != nullptr,
           "gemm_lt: GELU without its aux matrix");
  ZT_CHECK(epilogue.kind != LtEpilogue::Kind::kGeluBackward || epilogue.aux != nullptr,
           "gemm_lt: the GELU derivative without its aux matrix");
  ZT_CHECK(epilogue.kind != LtEpilogue::Kind::kBiasGradFromA || epilogue.bias_grad != nullptr,
           "gemm_lt: BGRADB without a bias gradient");
  const cublasLtEpilogue_t lt = lt_epilogue(epilogue);
  const GemmPlanKey key = lt_plan_key(transpose_a, transpose_b, m, n, k, a, lda, b, ldb, c, ldc,
                                      epilogue, workspace_bytes);
  const std::string context = "cuBLASLt gemm " + describe(key);
  const LtCall<In, Out> call{transpose_a, transpose_b, m,   n,    k, alpha, a,
                             lda,         b,           ldb, beta, c, ldc,   epilogue};
  // Handle: a cublasHandle_t is a valid cublasLtHandle_t (documented by cuBLASLt).
  const auto lt_handle = static_cast<cublasLtHandle_t>(handle.native());
  LtPlan* plan = plans.find(
      key, [&](const GemmPlanKey& asked) { return offer_plan(lt_handle, asked, lt, context); });
  if (plan != nullptr) {
    if (epilogue.bias != nullptr && lt != CUBLASLT_EPILOGUE_DEFAULT) {
      set(plan->matmul, CUBLASLT_MATMUL_DESC_BIAS_POINTER, epilogue.bias, context);
    }
    if (writes_bias_grad(lt)) {
      set(plan->matmul, CUBLASLT_MATMUL_DESC_BIAS_POINTER, epilogue.bias_grad, context);
    }
    if (has_aux(lt))
      set(plan->matmul, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, epilogue.aux, context);
    const cublasStatus_t status = cublasLtMatmul(
        lt_handle, plan->matmul, &alpha, b, plan->a, a, plan->b, &beta, c, plan->c, c, plan->c,
        &plan->algo, workspace, workspace_bytes, static_cast<cudaStream_t>(stream));
    if (status == CUBLAS_STATUS_SUCCESS) return;
    // An offered algorithm that then refuses the call degrades as one never offered.
    if (status != CUBLAS_STATUS_NOT_SUPPORTED) check_cublas(status, "cublasLtMatmul", context);
    plans.refuse(key, cublasGetStatusName(status));
  }
  run_unfused(handle, stream, call, context);
}

#define ZT_INSTANTIATE(In, Out)                                                                 \
  template void gemm_lt<In, Out>(CublasHandle&, LtPlans&, void*, bool, bool, std::int64_t,      \
                                 std::int64_t, std::int64_t, float, const In*, std::int64_t,    \
                                 const In*, std::int64_t, float, Out*, std::int64_t,            \
                                 const LtEpilogue&, void*, std::size_t);                        \
  template GemmPlanKey lt_plan_key<In, Out>(                                                    \
      bool, bool, std::int64_t, std::int64_t, std::int64_t, const In*, std::int64_t, const In*, \
      std::int64_t, const Out*, std::int64_t, const LtEpilogue&, std::size_t);
ZT_INSTANTIATE(float, float)
ZT_INSTANTIATE(BF16, float)
ZT_INSTANTIATE(BF16, BF16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cuda
