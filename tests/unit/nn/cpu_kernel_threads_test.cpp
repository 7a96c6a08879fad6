// The CPU kernels that run on parallel_for's threads give the same bits on 1, 2 and 4
// threads (Note [Chunks fixed by size]), in f32 and bf16, at odd sizes below and above the
// chunk grain: element-wise ops, the Linear epilogues and bias gradients, LayerNorm, softmax
// cross-entropy, embedding and attention.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/parallel_for.h"
#include "core/random.h"
#include "cpu_test_context.h"
#include "nn/kernels/attention_heads.h"
#include "support/parallel_threads.h"

namespace zt::nn {
namespace {

using Bytes = std::vector<unsigned char>;
using zt::testing::kThreadCounts;
using zt::testing::ParallelThreads;

// The tensors of one run of an op, made in one tracker, with seeded values.
class OpRun {
 public:
  OpRun() : cpu_(tracker_) {}
  DeviceContext& device() { return cpu_.device(); }

  Tensor random(const Shape& shape, DType dtype, std::uint64_t seed, float scale = 1.0f) {
    Tensor t = Tensor::zeros(shape, dtype, tracker_, MemoryCategory::kActivations);
    std::vector<float> values(static_cast<std::size_t>(t.numel()));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = scale * standard_normal(seed, i);
    if (!values.empty())
      convert_elements(values.data(), DType::kF32, t.data(), dtype, values.size());
    return t;
  }
  Tensor zeros(const Shape& shape, DType dtype) {
    return Tensor::zeros(shape, dtype, tracker_, MemoryCategory::kActivations);
  }
  Tensor ids(const Shape& shape, std::int32_t bound, std::uint64_t seed) {
    Tensor t = zeros(shape, DType::kI32);
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      t.data_as<std::int32_t>()[i] = static_cast<std::int32_t>(
          mix64(seed ^ mix64(static_cast<std::uint64_t>(i))) % static_cast<std::uint64_t>(bound));
    }
    return t;
  }

 private:
  MemoryTracker tracker_{Device::cpu()};
  testing::CpuTestContext cpu_;
};

Bytes bytes_of(const Tensor& t) {
  const auto* data = static_cast<const unsigned char*>(t.data());
  return Bytes(data, data + t.nbytes());
}
Bytes bytes_of(double value) {
  Bytes out(sizeof value);
  std::memcpy(out.data(), &value, sizeof value);
  return out;
}

// Runs `op` (which makes its operands, runs, and returns its outputs' bytes) on each thread
// count and expects every output equal to the 1-thread run's, byte for byte.
void expect_same_bits(const std::string& what, const std::function<std::vector<Bytes>()>& op) {
  std::vector<Bytes> one;
  for (const int threads : kThreadCounts) {
    const ParallelThreads scope(threads);
    const std::vector<Bytes> outputs = op();
    if (threads == 1) {
      one = outputs;
      continue;
    }
    ASSERT_EQ(outputs.size(), one.size());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      EXPECT_TRUE(outputs[i] == one[i])
          << what << ": output " << i << " differs on " << threads << " threads from 1 thread";
    }
  }
}

const KernelBackend& kernels() { return testing::cpu_kernels(); }

constexpr DType kDtypes[] = {DType::kF32, DType::kBF16};

std::string name(const char* op, DType dtype, std::int64_t size) {
  return std::string(op) + " " + std::string(dtype_name(dtype)) + " size " + std::to_string(size);
}

TEST(CpuKernelThreads, ElementwiseOpsGiveTheSameBitsOnAnyThreadCount) {
  for (const DType dtype : kDtypes) {
    for (const std::int64_t n : {std::int64_t{1023}, 3 * kParallelGrainElements + 7}) {
      expect_same_bits(name("gelu/add", dtype, n), [&] {
        OpRun run;
        const Tensor x = run.random(Shape{n}, dtype, 1), dy = run.random(Shape{n}, dtype, 2);
        const Tensor y = run.zeros(Shape{n}, dtype), dx = run.zeros(Shape{n}, dtype);
        const Tensor sum = run.zeros(Shape{n}, dtype);
        kernels().gelu_forward(run.device(), x, y);
        kernels().gelu_backward(run.device(), x, dy, dx);
        kernels().add(run.device(), x, dy, sum);
        return std::vector<Bytes>{bytes_of(y), bytes_of(dx), bytes_of(sum)};
      });
    }
  }
}

TEST(CpuKernelThreads, LinearEpiloguesAndBiasGradientsGiveTheSameBits) {
  for (const DType dtype : kDtypes) {
    for (const std::int64_t rows : {std::int64_t{5}, std::int64_t{1201}}) {
      expect_same_bits(name("linear", dtype, rows), [&] {
        OpRun run;
        const std::int64_t in = 33, out = 45;
        const Tensor x = run.random(Shape{rows, in}, dtype, 3);
        const Tensor w = run.random(Shape{out, in}, dtype, 4, 0.2f);
        const Tensor b = run.random(Shape{out}, dtype, 5);
        const Tensor y = run.zeros(Shape{rows, out}, dtype),
                     pre = run.zeros(Shape{rows, out}, dtype);
        kernels().linear_forward(run.device(), x, w, b, y, pre);
        const Tensor dy = run.random(Shape{rows, out}, dtype, 6);
        const Tensor dx = run.zeros(Shape{rows, in}, dtype);
        const Tensor dw = run.random(Shape{out, in}, DType::kF32, 7);
        const Tensor db = run.random(Shape{out}, DType::kF32, 8);
        const Tensor x_pre = run.random(Shape{rows, in}, dtype, 9);
        const Tensor x_pre_db = run.random(Shape{in}, DType::kF32, 10);
        kernels().linear_backward(run.device(), x, w, dy, dx, dw, db, x_pre, x_pre_db);
        return std::vector<Bytes>{bytes_of(y),  bytes_of(pre), bytes_of(dx),
                                  bytes_of(dw), bytes_of(db),  bytes_of(x_pre_db)};
      });
    }
  }
}

TEST(CpuKernelThreads, LayerNormGivesTheSameBits) {
  for (const DType dtype : kDtypes) {
    for (const std::int64_t rows : {std::int64_t{5}, std::int64_t{2003}}) {
      expect_same_bits(name("layer norm", dtype, rows), [&] {
        OpRun run;
        const std::int64_t channels = 37;
        const Tensor x = run.random(Shape{rows, channels}, dtype, 11);
        const Tensor w = run.random(Shape{channels}, dtype, 12),
                     b = run.random(Shape{channels}, dtype, 13);
        const Tensor y = run.zeros(Shape{rows, channels}, dtype);
        const Tensor mean = run.zeros(Shape{rows}, DType::kF32),
                     rstd = run.zeros(Shape{rows}, DType::kF32);
        kernels().layer_norm_forward(run.device(), x, w, b, 1e-5f, y, mean, rstd);
        const Tensor dy = run.random(Shape{rows, channels}, dtype, 14);
        const Tensor dx = run.zeros(Shape{rows, channels}, dtype);
        const Tensor dw = run.random(Shape{channels}, DType::kF32, 15);
        const Tensor db = run.random(Shape{channels}, DType::kF32, 16);
        kernels().layer_norm_backward(run.device(), x, w, mean, rstd, dy, dx, dw, db);
        return std::vector<Bytes>{bytes_of(y),  bytes_of(mean), bytes_of(rstd),
                                  bytes_of(dx), bytes_of(dw),   bytes_of(db)};
      });
    }
  }
}

TEST(CpuKernelThreads, SoftmaxCrossEntropyGivesTheSameLossAndGradientBits) {
  for (const DType dtype : kDtypes) {
    for (const std::int64_t rows : {std::int64_t{3}, std::int64_t{1601}}) {
      expect_same_bits(name("cross-entropy", dtype, rows), [&] {
        OpRun run;
        const std::int64_t classes = 61;
        const Tensor logits = run.random(Shape{rows, classes}, dtype, 17, 3.0f);
        const Tensor targets = run.ids(Shape{rows}, static_cast<std::int32_t>(classes), 18);
        const Tensor dlogits = run.zeros(Shape{rows, classes}, dtype);
        double loss = 0.0;
        kernels().softmax_cross_entropy(run.device(), logits, targets,
                                        logits.dim(logits.rank() - 1), 0.01f, dlogits, &loss);
        return std::vector<Bytes>{bytes_of(dlogits), bytes_of(loss)};
      });
    }
  }
}

TEST(CpuKernelThreads, EmbeddingGivesTheSameBits) {
  for (const DType dtype : kDtypes) {
    for (const std::int64_t batch : {std::int64_t{1}, std::int64_t{41}}) {
      expect_same_bits(name("embedding", dtype, batch), [&] {
        OpRun run;
        const std::int64_t vocab = 50, seq = 29, channels = 70;  // 3 chunks of channels
        const Tensor ids = run.ids(Shape{batch, seq}, static_cast<std::int32_t>(vocab), 19);
        const Tensor wte = run.random(Shape{vocab, channels}, dtype, 20);
        const Tensor wpe = run.random(Shape{seq, channels}, dtype, 21);
        const Tensor out = run.zeros(Shape{batch, seq, channels}, dtype);
        kernels().embedding_forward(run.device(), ids, wte, wpe, out);
        const Tensor dout = run.random(Shape{batch, seq, channels}, dtype, 22);
        const Tensor dwte = run.random(Shape{vocab, channels}, DType::kF32, 23);
        const Tensor dwpe = run.random(Shape{seq, channels}, DType::kF32, 24);
        kernels().embedding_backward(run.device(), ids, dout, dwte, dwpe);
        return std::vector<Bytes>{bytes_of(out), bytes_of(dwte), bytes_of(dwpe)};
      });
    }
  }
}

TEST(CpuKernelThreads, AttentionGivesTheSameBits) {
  for (const DType dtype : kDtypes) {
    for (const std::int64_t batch : {std::int64_t{1}, std::int64_t{3}}) {
      expect_same_bits(name("attention", dtype, batch), [&] {
        OpRun run;
        const std::int64_t seq = 37, n_head = 6, n_kv_head = 2, head_dim = 8;
        const std::int64_t width = (n_head + 2 * n_kv_head) * head_dim;
        const Tensor qkv = run.random(Shape{batch, seq, width}, dtype, 25);
        const Tensor dqkv = run.zeros(Shape{batch, seq, width}, dtype);
        const Tensor y = run.zeros(Shape{batch, seq, n_head * head_dim}, dtype);
        const Tensor dy = run.random(Shape{batch, seq, n_head * head_dim}, dtype, 26);
        const Tensor lse = run.zeros(Shape{batch, n_head, seq}, DType::kF32);
        const QkvHeads x = split_qkv(qkv, n_head, n_kv_head);
        const QkvHeads dx = split_qkv(dqkv, n_head, n_kv_head);
        const AttentionHeads o = AttentionHeads::packed(y, n_head);
        const AttentionHeads d_o = AttentionHeads::packed(dy, n_head);
        kernels().attention_forward(run.device(), x.q, x.k, x.v, o, lse);
        kernels().attention_backward(run.device(), x.q, x.k, x.v, o, lse, d_o, dx.q, dx.k, dx.v);
        return std::vector<Bytes>{bytes_of(y), bytes_of(lse), bytes_of(dqkv)};
      });
    }
  }
}

}  // namespace
}  // namespace zt::nn
