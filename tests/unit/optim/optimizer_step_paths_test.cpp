// The host optimizer step on every vector path this CPU runs (Note [The step loop on every
// vector path] in optim/step_internal.h): Adam, AdamW and SGD (plain, momentum, Nesterov)
// give the bits of a plain loop over optim::math's per-element update, on each path forced
// in turn, on 1, 2 and 4 threads, for f32, bf16 and f16 gradients and each compute copy
// (none, f32, bf16, f16), over sizes that end inside a block, on a block and across chunks;
// the step that sums the gradients' squares as it reads them gives sum_of_squares's bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device/device_context.h"
#include "core/random.h"
#include "optim/adam.h"
#include "optim/cpu_step_path.h"
#include "optim/math/optimizer_math.h"
#include "optim/sgd.h"
#include "support/parallel_threads.h"

namespace zt::optim {
namespace {

// 0, 1, a block and a bit (blocks are 256), two chunks and a bit (chunks are 32768).
constexpr std::int64_t kSizes[] = {0, 1, 263, 2 * 32768 + 77};
constexpr DType kGradDTypes[] = {DType::kF32, DType::kBF16, DType::kF16};
// nullopt: no compute copy.
const std::optional<DType> kComputeDTypes[] = {std::nullopt, DType::kF32, DType::kBF16,
                                               DType::kF16};
constexpr int kSteps = 2;
constexpr float kLr = 1e-2f;

// Forces a path for a scope and restores the one before.
class ForcedPath {
 public:
  explicit ForcedPath(CpuAdamPath path) : before_(cpu_step_path()) { set_cpu_step_path(path); }
  ForcedPath(const ForcedPath&) = delete;
  ForcedPath& operator=(const ForcedPath&) = delete;
  ~ForcedPath() { set_cpu_step_path(before_); }

 private:
  CpuAdamPath before_;
};

// Seeded normal values with the edge cases a vector loop could round differently planted at
// fixed places: signed zeros, a subnormal, large magnitudes, an infinity and a NaN.
std::vector<float> seeded(std::int64_t n, std::uint64_t key, float scale, bool specials) {
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = scale * standard_normal(key, i);
  if (!specials) return values;
  const float planted[] = {0.0f, -0.0f, 1e-40f, 6.0e4f, -3.0e38f, INFINITY, NAN, 1e-3f, -1e-6f};
  for (std::size_t i = 0; i < std::size(planted) && i * 37 < values.size(); ++i) {
    values[i * 37] = planted[i];
  }
  return values;
}

// The optimizer under test, and the same update as a plain loop over its element math.
struct Case {
  std::string name;
  std::unique_ptr<Optimizer> optimizer;
  // update(param, grad, states, i, step) for element i.
  void (*reference)(float&, float, std::vector<std::vector<float>>&, std::size_t, std::int64_t);
};

void adam_reference(float& param, float grad, std::vector<std::vector<float>>& states,
                    std::size_t i, std::int64_t step, bool decoupled) {
  const math::AdamStepScalars scalars =
      Adam(0.9f, 0.999f, 1e-8f, 0.1f, decoupled).step_scalars(step, kLr);
  math::adam_update(param, grad, states[0][i], states[1][i], scalars);
}

std::vector<Case> cases() {
  std::vector<Case> all;
  all.push_back({"adam", std::make_unique<Adam>(0.9f, 0.999f, 1e-8f, 0.1f, false),
                 [](float& p, float g, std::vector<std::vector<float>>& s, std::size_t i,
                    std::int64_t step) { adam_reference(p, g, s, i, step, false); }});
  all.push_back({"adamw", std::make_unique<Adam>(0.9f, 0.999f, 1e-8f, 0.1f, true),
                 [](float& p, float g, std::vector<std::vector<float>>& s, std::size_t i,
                    std::int64_t step) { adam_reference(p, g, s, i, step, true); }});
  all.push_back(
      {"sgd", std::make_unique<Sgd>(0.0f, false, 0.01f),
       [](float& p, float g, std::vector<std::vector<float>>&, std::size_t, std::int64_t) {
         float unused = 0.0f;
         math::sgd_update(p, g, unused, kLr, 0.0f, 0.01f, false);
       }});
  all.push_back({"sgd momentum", std::make_unique<Sgd>(0.9f, false, 0.01f),
                 [](float& p, float g, std::vector<std::vector<float>>& s, std::size_t i,
                    std::int64_t) { math::sgd_update(p, g, s[0][i], kLr, 0.9f, 0.01f, false); }});
  all.push_back({"sgd nesterov", std::make_unique<Sgd>(0.9f, true, 0.01f),
                 [](float& p, float g, std::vector<std::vector<float>>& s, std::size_t i,
                    std::int64_t) { math::sgd_update(p, g, s[0][i], kLr, 0.9f, 0.01f, true); }});
  return all;
}

template <typename T>
std::vector<std::byte> as_bytes_of(const std::vector<T>& values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::vector<std::byte> bytes_of(const Tensor& tensor) {
  std::vector<std::byte> out(tensor.nbytes());
  if (!out.empty()) std::memcpy(out.data(), tensor.data(), out.size());
  return out;
}

// Element i of `values` rounded to `dtype` and widened back, as the step reads a gradient.
std::vector<float> rounded_to(const std::vector<float>& values, DType dtype) {
  std::vector<float> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kBF16) {
      out[i] = static_cast<float>(BF16(values[i]));
    } else if (dtype == DType::kF16) {
      out[i] = static_cast<float>(F16(values[i]));
    } else {
      out[i] = values[i];
    }
  }
  return out;
}

// The master, each state and the compute copy after kSteps steps, as bytes.
using Bytes = std::vector<std::vector<std::byte>>;

Bytes run_reference(const Case& c, std::int64_t n, DType grad_dtype,
                    std::optional<DType> compute_dtype) {
  std::vector<float> master = seeded(n, 31, 1.0f, false);
  std::vector<std::vector<float>> states(
      static_cast<std::size_t>(c.optimizer->states_per_element()),
      std::vector<float>(static_cast<std::size_t>(n), 0.0f));
  for (std::int64_t step = 1; step <= kSteps; ++step) {
    const std::vector<float> grads = rounded_to(seeded(n, 40 + step, 0.1f, true), grad_dtype);
    for (std::size_t i = 0; i < master.size(); ++i)
      c.reference(master[i], grads[i], states, i, step);
  }
  Bytes result{as_bytes_of(master)};
  if (compute_dtype == DType::kF32) result.push_back(as_bytes_of(master));
  if (compute_dtype == DType::kBF16 || compute_dtype == DType::kF16) {
    std::vector<std::uint16_t> copy(master.size());
    for (std::size_t i = 0; i < copy.size(); ++i) {
      copy[i] =
          compute_dtype == DType::kBF16 ? f32_to_bf16_bits(master[i]) : f32_to_f16_bits(master[i]);
    }
    result.push_back(as_bytes_of(copy));
  }
  for (const std::vector<float>& state : states) result.push_back(as_bytes_of(state));
  return result;
}

Bytes run_step(const Case& c, std::int64_t n, DType grad_dtype,
               std::optional<DType> compute_dtype) {
  const auto device = make_cpu_device_context();
  const auto make = [&](DType dtype, const std::vector<float>& values) {
    Tensor tensor = Tensor::zeros(Shape{n}, dtype, device->tracker(), MemoryCategory::kWorkspace);
    if (n > 0) convert_elements(values.data(), DType::kF32, tensor.data(), dtype, values.size());
    return tensor;
  };
  const std::vector<float> zeros(static_cast<std::size_t>(n), 0.0f);
  const Tensor master = make(DType::kF32, seeded(n, 31, 1.0f, false));
  const Tensor compute = compute_dtype ? make(*compute_dtype, zeros) : Tensor();
  std::vector<Tensor> states;
  for (int i = 0; i < c.optimizer->states_per_element(); ++i) {
    states.push_back(make(DType::kF32, zeros));
  }
  for (std::int64_t step = 1; step <= kSteps; ++step) {
    const Tensor grads = make(grad_dtype, seeded(n, 40 + step, 0.1f, true));
    c.optimizer->step(master, grads, states, compute, step, kLr, *device);
  }
  Bytes result{bytes_of(master)};
  if (compute.defined()) result.push_back(bytes_of(compute));
  for (const Tensor& state : states) result.push_back(bytes_of(state));
  return result;
}

TEST(OptimizerStepPaths, EveryPathAndThreadCountGivesThePlainLoopsBits) {
  const std::vector<CpuAdamPath> paths = available_cpu_adam_paths();
  for (const Case& c : cases()) {
    for (const std::int64_t n : kSizes) {
      for (const DType grad_dtype : kGradDTypes) {
        for (const std::optional<DType> compute_dtype : kComputeDTypes) {
          const Bytes expected = run_reference(c, n, grad_dtype, compute_dtype);
          for (const CpuAdamPath path : paths) {
            const ForcedPath forced(path);
            for (const int threads : zt::testing::kThreadCounts) {
              const zt::testing::ParallelThreads scope(threads);
              SCOPED_TRACE(c.name + ", n " + std::to_string(n) + ", gradients " +
                           std::string(dtype_name(grad_dtype)) + ", copy " +
                           (compute_dtype ? std::string(dtype_name(*compute_dtype)) : "none") +
                           ", path " + std::string(cpu_adam_path_name(path)) + ", " +
                           std::to_string(threads) + " threads");
              const Bytes result = run_step(c, n, grad_dtype, compute_dtype);
              ASSERT_EQ(result.size(), expected.size());
              for (std::size_t i = 0; i < result.size(); ++i) {
                EXPECT_TRUE(result[i] == expected[i]) << "buffer " << i;
              }
            }
          }
        }
      }
    }
  }
}

// The same bits as a double, NaN equal to NaN.
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

// step_summing_squares (Note [The gradient norm in the update's pass]) updates as step() does
// and returns DeviceOps::sum_of_squares's bits for the gradients it read: on every path and
// thread count, for each gradient dtype, on sizes inside one chunk, across chunks and past the
// size where parallel_sum widens its chunks (256 of them); finite and non-finite gradients.
TEST(OptimizerStepPaths, SummingSquaresGivesTheNormPassBitsAndTheSameUpdate) {
  const std::vector<CpuAdamPath> paths = available_cpu_adam_paths();
  const auto device = make_cpu_device_context();
  const auto run = [&](const Case& c, std::int64_t n, DType grad_dtype, bool specials,
                       bool summing) {
    const auto make = [&](DType dtype, const std::vector<float>& values) {
      Tensor tensor = Tensor::zeros(Shape{n}, dtype, device->tracker(), MemoryCategory::kWorkspace);
      if (n > 0) convert_elements(values.data(), DType::kF32, tensor.data(), dtype, values.size());
      return tensor;
    };
    const Tensor master = make(DType::kF32, seeded(n, 31, 1.0f, false));
    std::vector<Tensor> states;
    for (int i = 0; i < c.optimizer->states_per_element(); ++i) {
      states.push_back(make(DType::kF32, std::vector<float>(static_cast<std::size_t>(n), 0.0f)));
    }
    const Tensor grads = make(grad_dtype, seeded(n, 41, 0.1f, specials));
    const double expected = device->ops().sum_of_squares(grads);
    double squares = 0.0;
    if (summing) {
      squares = c.optimizer->step_summing_squares(master, grads, states, Tensor(), 1, kLr, *device);
    } else {
      c.optimizer->step(master, grads, states, 1, kLr, *device);
    }
    if (summing) {
      EXPECT_TRUE(same_bits(squares, expected)) << squares << " vs " << expected;
    }
    return bytes_of(master);
  };
  for (const Case& c : cases()) {
    for (const std::int64_t n : kSizes) {
      for (const DType grad_dtype : kGradDTypes) {
        for (const bool specials : {false, true}) {
          const std::vector<std::byte> expected = run(c, n, grad_dtype, specials, false);
          for (const CpuAdamPath path : paths) {
            const ForcedPath forced(path);
            for (const int threads : zt::testing::kThreadCounts) {
              const zt::testing::ParallelThreads scope(threads);
              SCOPED_TRACE(c.name + ", n " + std::to_string(n) + ", gradients " +
                           std::string(dtype_name(grad_dtype)) + (specials ? ", specials" : "") +
                           ", path " + std::string(cpu_adam_path_name(path)) + ", " +
                           std::to_string(threads) + " threads");
              EXPECT_TRUE(run(c, n, grad_dtype, specials, true) == expected);
            }
          }
        }
      }
    }
  }
  // Past 256 chunks of 32768: parallel_sum's chunks grow, and the step's follow them.
  const zt::testing::ParallelThreads scope(2);
  const std::vector<Case> all = cases();
  const Case& adamw = all[1];
  const std::int64_t large = 256 * 32768 + 1001;
  EXPECT_TRUE(run(adamw, large, DType::kF32, false, true) ==
              run(adamw, large, DType::kF32, false, false));
  EXPECT_TRUE(run(adamw, large, DType::kBF16, false, true) ==
              run(adamw, large, DType::kBF16, false, false));
}

// The forced path is the one that runs, and a path this CPU lacks is refused by name.
TEST(OptimizerStepPaths, ForcingAPathIsCheckedAndRestored) {
  const CpuAdamPath best = cpu_step_path();
  EXPECT_EQ(best, best_cpu_adam_path());
  {
    const ForcedPath forced(CpuAdamPath::kScalar);
    EXPECT_EQ(cpu_step_path(), CpuAdamPath::kScalar);
  }
  EXPECT_EQ(cpu_step_path(), best);
  for (const CpuAdamPath path : {CpuAdamPath::kAvx2, CpuAdamPath::kAvx512}) {
    if (!cpu_adam_path_available(path)) {
      EXPECT_THROW(set_cpu_step_path(path), InternalError) << cpu_adam_path_name(path);
    }
  }
}

}  // namespace
}  // namespace zt::optim
