// cuBLASLt's fused epilogues and their unfused path (Note [Fused when offered] in
// nn/kernels/gemm_plan_cache.h) against a double-precision loop on the same inputs, for odd
// widths and operands at unaligned offsets into a flat buffer; and the bias gradients of a
// bf16 Linear as f32 sums, against the CPU backend. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "nn/kernels/cuda/gemm_cublaslt.h"
#include "nn/kernels/cuda_workspace.h"
#include "nn/kernels/math/gelu_math.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/gpu/kernel_backend_test_util.h"

namespace zt::nn {
namespace {

using gpu_test::DeviceBuffer;
using Kind = cuda::LtEpilogue::Kind;

// Odd widths (none a multiple of 8 but the GELU's, whose aux needs one to fuse), and every
// operand `kOffset` elements into its buffer, as parameters packed back to back would be.
constexpr std::int64_t kM = 7, kN = 40, kK = 37, kOffset = 3;

double gelu(double x) { return static_cast<double>(math::gelu_forward(static_cast<float>(x))); }
double dgelu(double x) {
  return static_cast<double>(math::gelu_backward(static_cast<float>(x), 1.0f));
}

template <typename In, typename Out>
struct Case {
  Kind kind;
  bool transpose_a;  // op(A) = A^T (BGRADB's dy^T)
  std::int64_t m, n, k;
  float beta;
};

// One gemm_lt call with `plans`, its outputs widened: C, then aux (kGelu) or the bias
// gradient (kGeluBackward, kBiasGradFromA).
struct Outputs {
  std::vector<float> c, extra;
};

template <typename In, typename Out>
class LtInputs {
 public:
  explicit LtInputs(const Case<In, Out>& c)
      : c_(c),
        a_(gpu_test::inputs<In>(static_cast<std::size_t>(kOffset + c.m * c.k), 1, 0.5f)),
        b_(gpu_test::inputs<In>(static_cast<std::size_t>(kOffset + c.k * c.n), 2, 0.5f)),
        c0_(gpu_test::inputs<Out>(static_cast<std::size_t>(kOffset + c.m * c.n), 3)),
        bias_(gpu_test::inputs<Out>(static_cast<std::size_t>(c.n), 4)),
        aux_(gpu_test::inputs<Out>(static_cast<std::size_t>(c.m * c.n), 5)) {}

  Outputs run(cuda::LtPlans& plans) const {
    cuda::CublasHandle handle;
    DeviceBuffer<In> a(gpu_test::to_storage<In>(a_)), b(gpu_test::to_storage<In>(b_));
    DeviceBuffer<Out> c(gpu_test::to_storage<Out>(c0_)), bias(gpu_test::to_storage<Out>(bias_));
    DeviceBuffer<Out> aux(gpu_test::to_storage<Out>(aux_));
    DeviceBuffer<float> bias_grad(static_cast<std::size_t>(std::max(c_.m, c_.n)));
    DeviceBuffer<std::uint8_t> workspace(static_cast<std::size_t>(cuda::kCublasWorkspaceBytes));
    cuda::LtEpilogue e{c_.kind, nullptr, nullptr, nullptr};
    if (c_.kind == Kind::kBias || c_.kind == Kind::kGelu) e.bias = bias.get();
    if (c_.kind == Kind::kGelu || c_.kind == Kind::kGeluBackward) e.aux = aux.get();
    if (c_.kind == Kind::kGeluBackward || c_.kind == Kind::kBiasGradFromA) {
      e.bias_grad = bias_grad.get();
    }
    cuda::gemm_lt<In, Out>(handle, plans, nullptr, c_.transpose_a, false, c_.m, c_.n, c_.k, 1.0f,
                           a.get() + kOffset, c_.transpose_a ? c_.m : c_.k, b.get() + kOffset, c_.n,
                           c_.beta, c.get() + kOffset, c_.n, e, workspace.get(),
                           static_cast<std::size_t>(cuda::kCublasWorkspaceBytes));
    Outputs out;
    out.c = gpu_test::to_float(c.download());
    out.c.erase(out.c.begin(), out.c.begin() + kOffset);
    if (c_.kind == Kind::kGelu) out.extra = gpu_test::to_float(aux.download());
    if (e.bias_grad != nullptr) {
      out.extra = bias_grad.download();
      out.extra.resize(static_cast<std::size_t>(c_.kind == Kind::kBiasGradFromA ? c_.m : c_.n));
    }
    return out;
  }

  // The same in double from the same rounded inputs.
  Outputs reference() const {
    const auto m = static_cast<std::size_t>(c_.m), n = static_cast<std::size_t>(c_.n),
               k = static_cast<std::size_t>(c_.k), off = static_cast<std::size_t>(kOffset);
    Outputs out;
    out.c.resize(m * n);
    std::vector<double> product(m * n);
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (std::size_t p = 0; p < k; ++p) {
          const double av = a_[off + (c_.transpose_a ? p * m + i : i * k + p)];
          sum += av * b_[off + p * n + j];
        }
        product[i * n + j] = sum + c_.beta * c0_[off + i * n + j];
      }
    }
    if (c_.kind == Kind::kGelu) out.extra.resize(m * n);
    if (c_.kind == Kind::kGeluBackward) out.extra.assign(n, 0.0f);
    if (c_.kind == Kind::kBiasGradFromA) out.extra.assign(m, 0.0f);
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        double v = product[i * n + j];
        if (c_.kind == Kind::kBias) v += bias_[j];
        if (c_.kind == Kind::kGelu) {
          out.extra[i * n + j] = static_cast<float>(v + bias_[j]);
          v = gelu(v + bias_[j]);
        }
        if (c_.kind == Kind::kGeluBackward) {
          v *= dgelu(aux_[i * n + j]);
          out.extra[j] += static_cast<float>(v);
        }
        out.c[i * n + j] = static_cast<float>(v);
      }
    }
    if (c_.kind == Kind::kBiasGradFromA) {
      for (std::size_t i = 0; i < m; ++i) {
        double sum = 0.0;
        for (std::size_t p = 0; p < k; ++p) sum += a_[off + p * m + i];
        out.extra[i] = static_cast<float>(sum);
      }
    }
    return out;
  }

 private:
  Case<In, Out> c_;
  std::vector<float> a_, b_, c0_, bias_, aux_;
};

// Plans that run every call unfused: each key refused before its first call.
template <typename In, typename Out>
void refuse_all(cuda::LtPlans& plans, const Case<In, Out>& c) {
  // The key depends on the addresses' alignment; both 256-byte cudaMalloc starts and the
  // offset are fixed, so the key of any buffers of these sizes is the same.
  DeviceBuffer<In> a(static_cast<std::size_t>(kOffset + c.m * c.k));
  DeviceBuffer<In> b(static_cast<std::size_t>(kOffset + c.k * c.n));
  DeviceBuffer<Out> out(static_cast<std::size_t>(kOffset + c.m * c.n));
  cuda::LtEpilogue e{c.kind, nullptr, nullptr, nullptr};
  std::vector<std::uint8_t> dummy(1);
  if (c.kind == Kind::kBias || c.kind == Kind::kGelu) e.bias = dummy.data();
  if (c.kind == Kind::kGeluBackward || c.kind == Kind::kBiasGradFromA) {
    e.bias_grad = reinterpret_cast<float*>(dummy.data());
  }
  plans.refuse(cuda::lt_plan_key<In, Out>(c.transpose_a, false, c.m, c.n, c.k, a.get() + kOffset,
                                          c.transpose_a ? c.m : c.k, b.get() + kOffset, c.n,
                                          out.get() + kOffset, c.n, e,
                                          static_cast<std::size_t>(cuda::kCublasWorkspaceBytes)),
               "the test asks for the unfused path");
}

template <typename In, typename Out>
void expect_fused_and_unfused_match_reference(const Case<In, Out>& c) {
  const LtInputs<In, Out> inputs(c);
  const Outputs want = inputs.reference();
  const double rel = std::is_same_v<Out, float> && std::is_same_v<In, float> ? 2e-5 : 1.0 / 32;
  const double abs = rel == 2e-5 ? 2e-5 : 2e-2;
  std::vector<std::string> logged;
  cuda::LtPlans fused_plans([&](const std::string& line) { logged.push_back(line); });
  cuda::LtPlans unfused_plans([](const std::string&) {});
  refuse_all(unfused_plans, c);
  for (cuda::LtPlans* plans : {&fused_plans, &unfused_plans}) {
    SCOPED_TRACE(plans == &fused_plans ? "fused where cuBLASLt offers it" : "unfused");
    const Outputs got = inputs.run(*plans);
    EXPECT_TRUE(gpu_test::all_near(got.c, want.c, rel, abs)) << "C";
    // Bias gradients are f32 sums of the unrounded (fused) or rounded (unfused) products.
    const double extra_rel = c.kind == Kind::kGelu ? rel : std::max(rel, 1.0 / 256) / 8;
    EXPECT_TRUE(gpu_test::all_near(got.extra, want.extra, extra_rel, abs)) << "aux or bias grad";
  }
  for (const std::string& line : logged) std::printf("logged: %s\n", line.c_str());
}

class GemmLtEpilogue : public ::testing::Test {
 protected:
  void SetUp() override { ZT_SKIP_WITHOUT_GPU(); }
};

TEST_F(GemmLtEpilogue, BiasFusedAndUnfusedMatchDoubleLoopAtOddWidths) {
  expect_fused_and_unfused_match_reference(Case<float, float>{Kind::kBias, false, kM, 37, kK, 0});
  expect_fused_and_unfused_match_reference(Case<BF16, BF16>{Kind::kBias, false, kM, 37, kK, 0});
}

TEST_F(GemmLtEpilogue, GeluFusedAndUnfusedMatchDoubleLoop) {
  expect_fused_and_unfused_match_reference(Case<float, float>{Kind::kGelu, false, kM, kN, kK, 0});
  expect_fused_and_unfused_match_reference(Case<BF16, BF16>{Kind::kGelu, false, kM, kN, kK, 0});
}

TEST_F(GemmLtEpilogue, GeluBackwardWithF32BiasGradFusedAndUnfusedMatchDoubleLoop) {
  expect_fused_and_unfused_match_reference(
      Case<float, float>{Kind::kGeluBackward, false, kM, kN, kK, 0});
  expect_fused_and_unfused_match_reference(
      Case<BF16, BF16>{Kind::kGeluBackward, false, kM, kN, kK, 0});
}

// dW += dy^T x with dy's column sums: beta 1 on an f32 output from bf16 inputs.
TEST_F(GemmLtEpilogue, BiasGradFromAFusedAndUnfusedMatchDoubleLoop) {
  expect_fused_and_unfused_match_reference(
      Case<float, float>{Kind::kBiasGradFromA, true, 37, 45, kM, 1});
  expect_fused_and_unfused_match_reference(
      Case<BF16, float>{Kind::kBiasGradFromA, true, 37, 45, kM, 1});
}

}  // namespace
}  // namespace zt::nn

namespace zt::gpu_test {
namespace {

using CudaBf16BiasGradients = BackendPair;

// A bf16 Linear's bias gradients are f32 sums (kernel_backend.h): with every term positive and
// 1024 rows, an f32 sum of the terms is within 2^-12 of the CPU's, where a sum rounded once to
// bf16 is off by up to 2^-9 and by more than 2^-12 in most columns.
TEST_P(CudaBf16BiasGradients, AreF32SumsNotRoundedToBf16) {
  constexpr std::int64_t kRows = 1024, kIn = 64, kOut = 32;
  const auto positive = [&](const Shape& shape, std::uint64_t key, float scale) {
    Tensor t = host(shape, DType::kF32, key, scale);
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      t.data_as<float>()[i] = std::fabs(t.data_as<float>()[i]) + 0.1f;
    }
    Tensor rounded = host_zeros(shape, dtype());
    convert_elements(t.data(), DType::kF32, rounded.data(), dtype(),
                     static_cast<std::size_t>(t.numel()));
    return rounded;
  };
  const Tensor x = positive(Shape{kRows, kIn}, 1, 1.0f);
  const Tensor pre = positive(Shape{kRows, kIn}, 2, 1.0f);
  const Tensor w = positive(Shape{kOut, kIn}, 3, 0.1f);
  const Tensor dy = positive(Shape{kRows, kOut}, 4, 1.0f);
  const Tensor dx_cpu = host_zeros(Shape{kRows, kIn}, dtype());
  const Tensor dw_cpu = host_zeros(Shape{kOut, kIn}, DType::kF32);
  const Tensor db_cpu = host_zeros(Shape{kOut}, DType::kF32);
  const Tensor db_pre_cpu = host_zeros(Shape{kIn}, DType::kF32);
  const Tensor dx_gpu = to_gpu(dx_cpu), dw_gpu = to_gpu(dw_cpu), db_gpu = to_gpu(db_cpu),
               db_pre_gpu = to_gpu(db_pre_cpu);
  cpu_kernels().linear_backward(cpu(), x, w, dy, dx_cpu, dw_cpu, db_cpu, pre, db_pre_cpu);
  gpu_kernels().linear_backward(gpu(), to_gpu(x), to_gpu(w), to_gpu(dy), dx_gpu, dw_gpu, db_gpu,
                                to_gpu(pre), db_pre_gpu);
  constexpr double kF32SumRel = 1.0 / 4096;
  EXPECT_TRUE(all_near(floats(db_gpu), floats(db_cpu), kF32SumRel, 0.0)) << "dbias (BGRADB)";
  EXPECT_TRUE(all_near(floats(db_pre_gpu), floats(db_pre_cpu), kF32SumRel, 0.0))
      << "pre-GELU dbias (DGELU_BGRAD)";
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaBf16BiasGradients, ::testing::Values(DType::kBF16),
                         dtype_param_name);

}  // namespace
}  // namespace zt::gpu_test
