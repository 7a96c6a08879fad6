// Dropout on the attention probabilities (Note [Attention dropout]): the CPU kernels against a
// double-precision loop that materializes P, drops it with the hash mask and multiplies by v,
// for a GPT-shaped, a grouped-query (Llama) and a two-key-block shape; gradients against
// finite differences under the fixed mask; bf16 tiles against the widened path; p = 0 bit for bit
// no dropout; and the attention layers draw masks in training only.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/random.h"
#include "cpu_test_context.h"
#include "nn/kernels/attention_heads.h"
#include "nn/kernels/cpu/attention_cpu.h"
#include "nn/kernels/math/attention_dropout_math.h"
#include "nn/layers/causal_self_attention.h"
#include "nn/layers/dropout.h"
#include "nn/layers/grouped_query_attention.h"

namespace zt::nn {
namespace {

using testing::cpu_kernels;

struct Case {
  std::int64_t batch;
  std::int64_t seq_len;
  std::int64_t n_head;
  std::int64_t n_kv_head;
  std::int64_t head_dim;
  std::string name() const {
    return "B" + std::to_string(batch) + " T" + std::to_string(seq_len) + " nh" +
           std::to_string(n_head) + " nkv" + std::to_string(n_kv_head) + " hs" +
           std::to_string(head_dim);
  }
};

// GPT-shaped (multi-head, two query blocks), grouped-query (3 query heads per kv head), and
// one of two key blocks (512 keys each) so that the mask's key index crosses a block.
const Case kGpt{2, 37, 4, 4, 8};
const Case kLlama{2, 33, 6, 2, 4};
const Case kTwoKeyBlocks{1, 530, 2, 1, 4};

constexpr float kP = 0.3f;
constexpr std::int64_t kFirstSample = 5;  // the micro-batch's place in the global batch

math::DropoutMask mask_of(float p) {
  return dropout_mask(DropoutDraw{1234, 7, kFirstSample}, p, 2, math::DropoutSite::kAttentionProbs);
}

// q, k, v side by side in one fused (B, T, width) tensor, o and d_o packed, dq, dk, dv in a
// second fused tensor; in `dtype`, from the same f32 values.
struct Operands {
  Operands(const Case& c, DType dtype, MemoryTracker& tracker, std::uint64_t seed)
      : qkv(make(Shape{c.batch, c.seq_len, (c.n_head + 2 * c.n_kv_head) * c.head_dim}, dtype,
                 tracker)),
        dqkv(make(qkv.shape(), dtype, tracker)),
        y(make(Shape{c.batch, c.seq_len, c.n_head * c.head_dim}, dtype, tracker)),
        dy(make(y.shape(), dtype, tracker)),
        lse(make(Shape{c.batch, c.n_head, c.seq_len}, DType::kF32, tracker)),
        x(split_qkv(qkv, c.n_head, c.n_kv_head)),
        dx(split_qkv(dqkv, c.n_head, c.n_kv_head)),
        o(AttentionHeads::packed(y, c.n_head)),
        d_o(AttentionHeads::packed(dy, c.n_head)) {
    fill(qkv, seed);
    fill(dy, seed + 1);
  }

  static Tensor make(const Shape& shape, DType dtype, MemoryTracker& tracker) {
    return Tensor::zeros(shape, dtype, tracker, MemoryCategory::kActivations);
  }
  static void fill(const Tensor& t, std::uint64_t seed) {
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      const float value = standard_normal(seed, static_cast<std::uint64_t>(i));
      if (t.dtype() == DType::kF32) {
        t.data_as<float>()[i] = value;
      } else {
        t.data_as<BF16>()[i] = BF16(value);
      }
    }
  }

  void forward(DeviceContext& device, const math::DropoutMask* mask) const {
    cpu_kernels().attention_forward(device, x.q, x.k, x.v, o, lse, mask);
  }
  void backward(DeviceContext& device, const math::DropoutMask* mask) const {
    cpu_kernels().attention_backward(device, x.q, x.k, x.v, o, lse, d_o, dx.q, dx.k, dx.v, mask);
  }

  Tensor qkv, dqkv, y, dy, lse;
  QkvHeads x, dx;
  AttentionHeads o, d_o;
};

double at(const AttentionHeads& heads, std::int64_t b, std::int64_t t, std::int64_t h,
          std::int64_t d) {
  return heads.base.data_as<float>()[heads.row_start(b, t, h) + d];
}

// Note [Attention dropout] in double, P materialized per (batch row, query head h):
//   P = causal_softmax(q k^T / sqrt(hs));  Pd = P Z;  o = Pd v;  lse of the undropped scores
//   dPd = dO v^T;  dP = dPd Z;  dS = P (dP - rowsum(P dP));  dq = scale dS k;
//   dk = scale dS^T q;  dv = Pd^T dO
// with Z = 1 / (1 - p) where the hash keeps P(b, h, i, j), else 0. Results in the operands'
// layouts.
struct Reference {
  std::vector<double> o, lse, dqkv;
};
Reference reference(const Case& c, const Operands& x, const math::DropoutMask& mask) {
  const std::int64_t t_len = c.seq_len, hs = c.head_dim, group = c.n_head / c.n_kv_head;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hs));
  Reference r{std::vector<double>(static_cast<std::size_t>(x.y.numel()), 0.0),
              std::vector<double>(static_cast<std::size_t>(x.lse.numel()), 0.0),
              std::vector<double>(static_cast<std::size_t>(x.dqkv.numel()), 0.0)};
  const auto grad = [&](const AttentionHeads& heads, std::int64_t b, std::int64_t t, std::int64_t h,
                        std::int64_t d) -> double& {
    return r.dqkv[static_cast<std::size_t>(heads.row_start(b, t, h) + d)];
  };
  std::vector<double> p(static_cast<std::size_t>(t_len)), z(p.size()), dp(p.size());
  for (std::int64_t b = 0; b < c.batch; ++b) {
    for (std::int64_t h = 0; h < c.n_head; ++h) {
      const std::int64_t kv = h / group;
      const math::AttentionDropoutHead head = math::attention_dropout_head(mask, b, h, t_len);
      for (std::int64_t i = 0; i < t_len; ++i) {
        const auto j_of = [](std::int64_t j) { return static_cast<std::size_t>(j); };
        double max_s = -INFINITY;
        for (std::int64_t j = 0; j <= i; ++j) {
          double s = 0.0;
          for (std::int64_t d = 0; d < hs; ++d) s += at(x.x.q, b, i, h, d) * at(x.x.k, b, j, kv, d);
          p[j_of(j)] = s * scale;
          max_s = std::max(max_s, s * scale);
        }
        double sum = 0.0;
        for (std::int64_t j = 0; j <= i; ++j) sum += std::exp(p[j_of(j)] - max_s);
        for (std::int64_t j = 0; j <= i; ++j) {
          p[j_of(j)] = std::exp(p[j_of(j)] - max_s) / sum;
          z[j_of(j)] = head.keep(i, j) ? 1.0 / (1.0 - double{kP}) : 0.0;
        }
        r.lse[static_cast<std::size_t>((b * c.n_head + h) * t_len + i)] = max_s + std::log(sum);
        for (std::int64_t d = 0; d < hs; ++d) {
          double o = 0.0;
          for (std::int64_t j = 0; j <= i; ++j)
            o += p[j_of(j)] * z[j_of(j)] * at(x.x.v, b, j, kv, d);
          r.o[static_cast<std::size_t>(x.o.row_start(b, i, h) + d)] = o;
        }
        double row_dot = 0.0;  // rowsum(P dP)
        for (std::int64_t j = 0; j <= i; ++j) {
          double s = 0.0;
          for (std::int64_t d = 0; d < hs; ++d) s += at(x.d_o, b, i, h, d) * at(x.x.v, b, j, kv, d);
          dp[j_of(j)] = s * z[j_of(j)];
          row_dot += p[j_of(j)] * dp[j_of(j)];
        }
        for (std::int64_t j = 0; j <= i; ++j) {
          const double ds = p[j_of(j)] * (dp[j_of(j)] - row_dot);
          for (std::int64_t d = 0; d < hs; ++d) {
            grad(x.dx.q, b, i, h, d) += scale * ds * at(x.x.k, b, j, kv, d);
            grad(x.dx.k, b, j, kv, d) += scale * ds * at(x.x.q, b, i, h, d);
            grad(x.dx.v, b, j, kv, d) += p[j_of(j)] * z[j_of(j)] * at(x.d_o, b, i, h, d);
          }
        }
      }
    }
  }
  return r;
}

void expect_matches_reference(const Case& c) {
  SCOPED_TRACE(c.name());
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext cpu(tracker);
  const Operands x(c, DType::kF32, tracker, 91);
  const math::DropoutMask mask = mask_of(kP);
  x.forward(cpu.device(), nullptr);
  const std::vector<float> undropped(x.y.data_as<float>(), x.y.data_as<float>() + x.y.numel());
  x.forward(cpu.device(), &mask);
  x.backward(cpu.device(), &mask);
  const Reference r = reference(c, x, mask);
  std::int64_t changed = 0;
  for (std::int64_t i = 0; i < x.y.numel(); ++i) {
    const float got = x.y.data_as<float>()[i];
    EXPECT_NEAR(got, r.o[static_cast<std::size_t>(i)], 4e-6) << "o " << i;
    changed += got != undropped[static_cast<std::size_t>(i)];
  }
  EXPECT_GT(changed, x.y.numel() / 2) << "dropout left o as it was";
  for (std::int64_t i = 0; i < x.lse.numel(); ++i) {
    EXPECT_NEAR(x.lse.data_as<float>()[i], r.lse[static_cast<std::size_t>(i)], 2e-6) << "lse " << i;
  }
  for (std::int64_t i = 0; i < x.dqkv.numel(); ++i) {
    EXPECT_NEAR(x.dqkv.data_as<float>()[i], r.dqkv[static_cast<std::size_t>(i)], 2e-5)
        << "dqkv " << i;
  }
}

TEST(AttentionDropout, GptShapeMatchesTheDroppedProbabilitiesInDouble) {
  expect_matches_reference(kGpt);
}
TEST(AttentionDropout, GroupedQueryShapeMatchesTheDroppedProbabilitiesInDouble) {
  expect_matches_reference(kLlama);
}
TEST(AttentionDropout, MasksFollowTheKeyAcrossKeyBlocks) {
  expect_matches_reference(kTwoKeyBlocks);
}

// L = Σ o ∘ dy in double, for finite differences under the fixed mask.
double loss(const Operands& x, DeviceContext& device, const math::DropoutMask& mask) {
  x.forward(device, &mask);
  double total = 0.0;
  for (std::int64_t i = 0; i < x.y.numel(); ++i) {
    total += double{x.y.data_as<float>()[i]} * x.dy.data_as<float>()[i];
  }
  return total;
}

TEST(AttentionDropout, GradientsMatchFiniteDifferencesUnderTheFixedMask) {
  constexpr float kStep = 1e-2f;
  const Case c{2, 7, 4, 2, 3};
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext cpu(tracker);
  const Operands x(c, DType::kF32, tracker, 92);
  const math::DropoutMask mask = mask_of(kP);
  x.forward(cpu.device(), &mask);
  x.backward(cpu.device(), &mask);
  float* qkv = x.qkv.data_as<float>();
  for (std::int64_t i = 0; i < x.qkv.numel(); ++i) {
    const float saved = qkv[i];
    qkv[i] = saved + kStep;
    const double up = loss(x, cpu.device(), mask);
    qkv[i] = saved - kStep;
    const double down = loss(x, cpu.device(), mask);
    qkv[i] = saved;
    const double numeric = (up - down) / (2.0 * kStep);
    const double analytic = x.dqkv.data_as<float>()[i];
    EXPECT_NEAR(analytic, numeric, 5e-3 + 1e-2 * std::fabs(numeric)) << "element " << i;
  }
}

// A mask of p = 0 keeps every element and scales by exactly 1: the bits of no dropout.
TEST(AttentionDropout, ZeroProbabilityIsBitForBitNoDropout) {
  for (const Case& c : {kGpt, kLlama}) {
    SCOPED_TRACE(c.name());
    MemoryTracker tracker(Device::cpu());
    testing::CpuTestContext cpu(tracker);
    const Operands plain(c, DType::kF32, tracker, 93), masked(c, DType::kF32, tracker, 93);
    const math::DropoutMask mask = mask_of(0.0f);
    plain.forward(cpu.device(), nullptr);
    plain.backward(cpu.device(), nullptr);
    masked.forward(cpu.device(), &mask);
    masked.backward(cpu.device(), &mask);
    for (const auto& [a, b] : {std::pair{plain.y, masked.y}, std::pair{plain.lse, masked.lse},
                               std::pair{plain.dqkv, masked.dqkv}}) {
      ASSERT_EQ(a.numel(), b.numel());
      for (std::int64_t i = 0; i < a.numel(); ++i) {
        ASSERT_EQ(a.data_as<float>()[i], b.data_as<float>()[i]) << "element " << i;
      }
    }
  }
}

// The mask is drawn in place in the score, P and dS blocks: no workspace beyond what attention
// without dropout takes (what the estimator counts, Note [Dry kernels]).
TEST(AttentionDropout, TakesNoWorkspaceOfItsOwn) {
  const math::DropoutMask mask = mask_of(kP);
  for (const DType dtype : {DType::kF32, DType::kBF16}) {
    MemoryTracker tracker(Device::cpu());
    testing::CpuTestContext cpu(tracker);
    const Operands x(kLlama, dtype, tracker, 97);
    std::vector<std::int64_t> peaks;
    for (const math::DropoutMask* m : {static_cast<const math::DropoutMask*>(nullptr), &mask}) {
      tracker.reset_peaks();
      x.forward(cpu.device(), m);
      peaks.push_back(tracker.peak_bytes(MemoryCategory::kWorkspace));
      tracker.reset_peaks();
      x.backward(cpu.device(), m);
      peaks.push_back(tracker.peak_bytes(MemoryCategory::kWorkspace));
    }
    EXPECT_EQ(peaks[2], peaks[0]) << "forward, " << dtype_name(dtype);
    EXPECT_EQ(peaks[3], peaks[1]) << "backward, " << dtype_name(dtype);
  }
}

// The bf16 tiles on oneDNN's bf16 GEMM (where it runs on AMX; else the widened path again)
// drop what the widened-to-f32 path drops, whose f32 arithmetic the double loop above checks:
// their o and gradients are within a bf16 rounding of each other.
TEST(AttentionDropout, Bf16TilesDropWhatTheWidenedPathDrops) {
  const math::DropoutMask mask = mask_of(kP);
  MemoryTracker tracker(Device::cpu());
  const Operands tiles(kLlama, DType::kBF16, tracker, 94),
      widened(kLlama, DType::kBF16, tracker, 94);
  for (const auto& [x, products] :
       {std::pair{&tiles, cpu::Bf16AttentionProducts::kBf16WhereAvailable},
        std::pair{&widened, cpu::Bf16AttentionProducts::kWidenedToF32}}) {
    cpu::attention_forward(x->x.q, x->x.k, x->x.v, x->o, x->lse, tracker, products, &mask);
    cpu::attention_backward(x->x.q, x->x.k, x->x.v, x->o, x->lse, x->d_o, x->dx.q, x->dx.k, x->dx.v,
                            tracker, products, &mask);
  }
  for (const auto& [want, got] :
       {std::pair{widened.y, tiles.y}, std::pair{widened.dqkv, tiles.dqkv}}) {
    for (std::int64_t i = 0; i < want.numel(); ++i) {
      const float expected = static_cast<float>(want.data_as<BF16>()[i]);
      EXPECT_NEAR(static_cast<float>(got.data_as<BF16>()[i]), expected,
                  std::fabs(expected) / 128 + 1e-5f)
          << "element " << i;
    }
  }
}

// The layers draw masks in training only: a ModuleContext with a DropoutDraw changes the
// output, one without it (evaluation, generation) gives the model without dropout's bits.
TEST(AttentionDropout, TheAttentionLayersDropInTrainingOnly) {
  constexpr std::int64_t kBatch = 2, kSeq = 9, kChannels = 16;
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext cpu(tracker);
  const AttentionDropout dropout{0.25f, 1};
  std::vector<std::unique_ptr<Module>> pairs;
  pairs.push_back(std::make_unique<CausalSelfAttention>("attn", kChannels, 4, 0.02f));
  pairs.push_back(std::make_unique<CausalSelfAttention>("attn", kChannels, 4, 0.02f, dropout));
  pairs.push_back(std::make_unique<GroupedQueryAttention>(
      "attn", GroupedQueryAttentionShape{kChannels, 4, 2, 10000.0f}, 0.02f));
  pairs.push_back(std::make_unique<GroupedQueryAttention>(
      "attn", GroupedQueryAttentionShape{kChannels, 4, 2, 10000.0f}, 0.02f, dropout));
  const Tensor input = Operands::make(Shape{kBatch, kSeq, kChannels}, DType::kF32, tracker);
  Operands::fill(input, 95);
  const DropoutDraw draw{77, 3, 0};
  for (std::size_t pair = 0; pair < pairs.size(); pair += 2) {
    std::vector<Tensor> params;
    std::vector<Tensor> grads;
    for (const ParameterSpec& spec : pairs[pair]->parameter_specs()) {
      params.push_back(Operands::make(spec.shape, DType::kF32, tracker));
      Operands::fill(params.back(), 96 + params.size());
      grads.push_back(Operands::make(spec.shape, DType::kF32, tracker));
    }
    const auto run = [&](Module& module, const DropoutDraw* d) {
      SavedActivations saved;
      ModuleContext ctx = cpu.module(saved);
      ctx.dropout = d;
      const Tensor out = module.forward(params, input, ctx);
      const Tensor dx = module.backward(params, grads, out, ctx);
      std::vector<float> values(out.data_as<float>(), out.data_as<float>() + out.numel());
      values.insert(values.end(), dx.data_as<float>(), dx.data_as<float>() + dx.numel());
      return values;
    };
    Module& plain = *pairs[pair];
    Module& dropped = *pairs[pair + 1];
    EXPECT_EQ(run(dropped, nullptr), run(plain, nullptr)) << "evaluation, module " << pair;
    EXPECT_EQ(run(plain, &draw), run(plain, nullptr)) << "p = 0 in training, module " << pair;
    const std::vector<float> trained = run(dropped, &draw);
    EXPECT_NE(trained, run(plain, &draw)) << "module " << pair;
    EXPECT_EQ(run(dropped, &draw), trained) << "the same draw, the same masks: module " << pair;
  }
}

}  // namespace
}  // namespace zt::nn
