// The one-pass optimizer step (gradients read in their stored dtype, the compute-dtype copy
// written in the same pass) gives bitwise what the strategies did before it: cast the
// gradients to fp32, step, cast the master into the compute-dtype parameters. SGD (plain,
// momentum, Nesterov), Adam and AdamW; f32, bf16 and f16 gradients; bf16, f16 and f32
// copies; sizes 0, 1, 22 and 2^20 + 3.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/device/device_context.h"
#include "core/random.h"
#include "optim/adam.h"
#include "optim/sgd.h"
#include "support/parallel_threads.h"

namespace zt::optim {
namespace {

constexpr std::int64_t kSizes[] = {0, 1, 22, (std::int64_t{1} << 20) + 3};
constexpr DType kGradDTypes[] = {DType::kF32, DType::kBF16, DType::kF16};
constexpr DType kComputeDTypes[] = {DType::kBF16, DType::kF16, DType::kF32};
constexpr int kSteps = 3;

// Seeded normal values, drawn once per (n, key, scale) for all the runs that share them.
const std::vector<float>& seeded(std::int64_t n, std::uint64_t key, float scale) {
  static std::map<std::tuple<std::int64_t, std::uint64_t, float>, std::vector<float>> drawn;
  std::vector<float>& values = drawn[{n, key, scale}];
  if (values.size() != static_cast<std::size_t>(n)) {
    values.resize(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = scale * standard_normal(key, i);
  }
  return values;
}

// Host tensors of the CPU context, filled with seeded values rounded to their dtype.
struct Buffers {
  DeviceContext& device;
  explicit Buffers(DeviceContext& context) : device(context) {}
  Tensor make(std::int64_t n, DType dtype, std::uint64_t key, float scale) {
    Tensor tensor = Tensor::zeros(Shape{n}, dtype, device.tracker(), MemoryCategory::kWorkspace);
    if (n > 0 && scale != 0.0f) {
      const std::vector<float>& values = seeded(n, key, scale);
      convert_elements(values.data(), DType::kF32, tensor.data(), dtype, values.size());
    }
    return tensor;
  }
};

// The master, each state and the compute copy of one run, as bytes.
using Bytes = std::vector<std::vector<std::byte>>;

std::vector<std::byte> bytes_of(const Tensor& tensor) {
  std::vector<std::byte> out(tensor.nbytes());
  if (!out.empty()) std::memcpy(out.data(), tensor.data(), out.size());
  return out;
}

// kSteps steps of `optimizer` over n elements, either as one pass or as the old sequence.
Bytes run(const Optimizer& optimizer, std::int64_t n, DType grad_dtype, DType compute_dtype,
          bool one_pass) {
  const auto device = make_cpu_device_context();
  Buffers buffers(*device);
  const Tensor master = buffers.make(n, DType::kF32, 31, 1.0f);
  const Tensor compute = buffers.make(n, compute_dtype, 32, 1.0f);
  std::vector<Tensor> states;
  for (int i = 0; i < optimizer.states_per_element(); ++i) {
    states.push_back(buffers.make(n, DType::kF32, 0, 0.0f));
  }
  const Tensor wide = buffers.make(n, DType::kF32, 0, 0.0f);
  for (int step = 1; step <= kSteps; ++step) {
    const Tensor grads = buffers.make(n, grad_dtype, 40 + step, 0.1f);
    if (one_pass) {
      optimizer.step(master, grads, states, compute, step, 1e-2f, *device);
    } else if (n > 0) {  // empty tensors have no storage to cast between
      device->ops().cast(grads, wide);
      optimizer.step(master, wide, states, step, 1e-2f, *device);
      device->ops().cast(master, compute);
    }
  }
  Bytes result{bytes_of(master), bytes_of(compute)};
  for (const Tensor& state : states) result.push_back(bytes_of(state));
  return result;
}

void expect_one_pass_is_the_sequence(const Optimizer& optimizer, const std::string& what) {
  for (const std::int64_t n : kSizes) {
    for (const DType grad_dtype : kGradDTypes) {
      for (const DType compute_dtype : kComputeDTypes) {
        SCOPED_TRACE(what + ", n " + std::to_string(n) + ", gradients " +
                     std::string(dtype_name(grad_dtype)) + ", copy " +
                     std::string(dtype_name(compute_dtype)));
        const Bytes fused = run(optimizer, n, grad_dtype, compute_dtype, true);
        const Bytes sequence = run(optimizer, n, grad_dtype, compute_dtype, false);
        ASSERT_EQ(fused.size(), sequence.size());
        EXPECT_TRUE(fused[0] == sequence[0]) << "master";
        EXPECT_TRUE(fused[1] == sequence[1]) << "compute-dtype copy";
        for (std::size_t i = 2; i < fused.size(); ++i) {
          EXPECT_TRUE(fused[i] == sequence[i]) << "state " << i - 2;
        }
      }
    }
  }
}

TEST(OptimizerOnePass, SgdIsBitwiseCastStepCast) {
  expect_one_pass_is_the_sequence(Sgd(0.0f, false, 0.01f), "sgd");
  expect_one_pass_is_the_sequence(Sgd(0.9f, false, 0.01f), "sgd momentum");
  expect_one_pass_is_the_sequence(Sgd(0.9f, true, 0.01f), "sgd nesterov");
}

TEST(OptimizerOnePass, AdamAndAdamWAreBitwiseCastStepCast) {
  expect_one_pass_is_the_sequence(Adam(0.9f, 0.999f, 1e-8f, 0.1f, false), "adam");
  expect_one_pass_is_the_sequence(Adam(0.9f, 0.999f, 1e-8f, 0.1f, true), "adamw");
}

// The CPU step runs chunks of elements on parallel_for's threads: the same bits on 1, 2 and 4.
TEST(OptimizerOnePass, GivesTheSameBitsOnAnyThreadCount) {
  const Sgd sgd(0.9f, true, 0.01f);
  const Adam adamw(0.9f, 0.999f, 1e-8f, 0.1f, true);
  for (const Optimizer* optimizer :
       {static_cast<const Optimizer*>(&sgd), static_cast<const Optimizer*>(&adamw)}) {
    for (const std::int64_t n : {std::int64_t{22}, (std::int64_t{1} << 20) + 3}) {
      SCOPED_TRACE(std::string(optimizer->name()) + ", n " + std::to_string(n));
      Bytes one;
      for (const int threads : zt::testing::kThreadCounts) {
        const zt::testing::ParallelThreads scope(threads);
        const Bytes result = run(*optimizer, n, DType::kBF16, DType::kBF16, true);
        if (threads == 1) one = result;
        EXPECT_TRUE(result == one) << threads << " threads";
      }
    }
  }
}

TEST(OptimizerOnePass, TheCopyChangesWithTheMaster) {
  // A copy the step did not write would still hold its seeded values: the sequence test
  // would pass trivially if both paths skipped it. Pin that it moves.
  const auto device = make_cpu_device_context();
  Buffers buffers(*device);
  const Tensor master = buffers.make(22, DType::kF32, 31, 1.0f);
  const Tensor compute = buffers.make(22, DType::kBF16, 0, 0.0f);
  const Tensor grads = buffers.make(22, DType::kBF16, 41, 0.1f);
  Sgd(0.0f, false, 0.0f).step(master, grads, {}, compute, 1, 1e-2f, *device);
  for (std::int64_t i = 0; i < 22; ++i) {
    const float rounded = static_cast<float>(BF16(master.data_as<float>()[i]));
    EXPECT_EQ(static_cast<float>(compute.data_as<BF16>()[i]), rounded) << i;
    EXPECT_NE(rounded, 0.0f) << i;
  }
}

}  // namespace
}  // namespace zt::optim
