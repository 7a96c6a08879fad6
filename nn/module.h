// Module: a layer or block with explicit forward and backward. It declares its parameters
// and is handed views to read them from and to accumulate gradients into, so the sharding
// layer alone decides where parameters and gradients live.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/device/device_context.h"
#include "core/memory_tracker.h"
#include "core/tensor.h"
#include "nn/kernels/kernel_backend.h"
#include "nn/parameter.h"

namespace zt::nn {

// What forward keeps for backward: a stack (forward pushes, backward pops in reverse), so a
// composite module's children unwind in the right order. Tensors in it are tracked as
// activations by whoever allocated them; clearing it frees them.
class SavedActivations {
 public:
  void push(Tensor tensor) { stack_.push_back(std::move(tensor)); }
  Tensor pop();
  bool empty() const { return stack_.empty(); }
  void clear() { stack_.clear(); }

 private:
  std::vector<Tensor> stack_;
};

class DecodeState;

// Which masks a training micro-batch's dropout draws (Note [Dropout masks from a hash] in
// nn/kernels/math/dropout_math.h): the run's seed, the step (1-based), and the index in the
// step's global batch of the micro-batch's first sample.
struct DropoutDraw {
  std::uint64_t seed = 0;
  std::int64_t step = 0;
  std::int64_t first_sample = 0;
};

// Everything a module call needs besides its parameters: the device it runs on (outputs and
// saved tensors are allocated as activations through its tracker), that device's kernels,
// where forward keeps what backward needs, and, when decoding, the KV cache and position of
// the tokens given (Note [Decoding with a KV cache] in nn/decode_state.h; null in training),
// and, in a training forward and its backward only, the dropout masks to draw (null:
// evaluation and generation, which run without dropout).
struct ModuleContext {
  DeviceContext& device;
  const KernelBackend& kernels;
  SavedActivations& saved;
  DecodeState* decode = nullptr;
  const DropoutDraw* dropout = nullptr;

  MemoryTracker& tracker() const { return device.tracker(); }
};

class Module {
 public:
  virtual ~Module() = default;

  virtual std::vector<ParameterSpec> parameter_specs() const = 0;

  // Returns the output for `input`; pushes what backward needs onto ctx.saved.
  virtual Tensor forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) = 0;

  // Validates `input`, user data in host memory, before it is copied to the device: throws
  // FormatError naming what is wrong and where (the Embedding's token ids). The first block's
  // module is asked for every batch the trainer reads, so a device kernel needs no check and
  // no copy back. Default: any input of the right shape is valid.
  virtual void check_input(const Tensor& /*input*/) const {}

  // Given dL/d(output), adds dL/d(parameter) into `grads` (same order and shapes as
  // `params`) and returns dL/d(input). Pops what forward pushed.
  virtual Tensor backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                          ModuleContext& ctx) = 0;
};

}  // namespace zt::nn
