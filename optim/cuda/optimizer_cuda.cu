// CUDA SGD and Adam/AdamW: one grid-stride kernel per range that reads each gradient in its
// stored dtype, updates the master and the states through optim::math, and writes the
// compute-dtype copy, every operand moved once in 128-bit accesses (Note [The optimizer in
// one pass] in docs/ARCHITECTURE.md).
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/error.h"
#include "optim/cuda/optimizer_cuda.h"

namespace zt::optim::cuda {
namespace {

constexpr int kThreadsPerBlock = 256;
constexpr std::int64_t kMaxBlocks = 65535;

int blocks_for(std::int64_t work_items) {
  const std::int64_t blocks = (work_items + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<int>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

// optim links only to core, so it cannot use nn's ZT_CUDA_CHECK; launches are its only CUDA
// calls, and this names the kernel and the size as that macro would.
void check_launch(const char* kernel, std::int64_t n) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) {
    throw Error(std::string("CUDA call cudaGetLastError failed (") + kernel + " launch, " +
                std::to_string(n) + " elements): " + cudaGetErrorString(status));
  }
}

// Elements a thread takes per iteration: 16 bytes of a 2-byte dtype, two 16-byte pieces of
// f32. Every operand of a step packs the same count, so one index walks them all.
constexpr int kPackElements = 8;

// kPackElements values of T in registers, moved to and from global memory in 128-bit pieces
// (llm.c's Packed128, sized by elements rather than bytes).
template <typename T>
struct alignas(16) Pack {
  static constexpr int kPieces = static_cast<int>(kPackElements * sizeof(T) / 16);
  T values[kPackElements];
};
static_assert(sizeof(Pack<float>) == 32 && sizeof(Pack<BF16>) == 16 && sizeof(Pack<F16>) == 16,
              "a pack is whole 128-bit pieces");

template <typename T>
__device__ Pack<T> load_pack(const T* from) {
  Pack<T> pack;
  const int4* src = reinterpret_cast<const int4*>(from);
  int4* dst = reinterpret_cast<int4*>(pack.values);
#pragma unroll
  for (int k = 0; k < Pack<T>::kPieces; ++k) dst[k] = src[k];
  return pack;
}

template <typename T>
__device__ void store_pack(T* to, const Pack<T>& pack) {
  const int4* src = reinterpret_cast<const int4*>(pack.values);
  int4* dst = reinterpret_cast<int4*>(to);
#pragma unroll
  for (int k = 0; k < Pack<T>::kPieces; ++k) dst[k] = src[k];
}

bool aligned_16(const void* pointer) {
  return pointer == nullptr || reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
}

// The flat operands of one step: the master, kStates optimizer states, the gradients and an
// optional compute-dtype copy, all n long.
template <int kStates, typename G, typename P>
struct StepOperands {
  float* params;
  float* states[kStates > 0 ? kStates : 1];
  const G* grads;
  P* compute;  // nullptr: no copy
  std::int64_t n;
  std::int64_t packs;  // leading elements taken kPackElements at a time: 0 when not aligned
};

// update(param, grad, state) is the optimizer's element update (optim::math) with the
// element's kStates states in `state`. Packs first, then the tail one element per thread.
template <int kStates, typename G, typename P, typename Update>
__global__ void fused_step_kernel(StepOperands<kStates, G, P> op, Update update) {
  const std::int64_t first = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  float state[kStates > 0 ? kStates : 1];
  for (std::int64_t k = first; k < op.packs; k += stride) {
    const std::int64_t base = k * kPackElements;
    Pack<float> params = load_pack(op.params + base);
    const Pack<G> grads = load_pack(op.grads + base);
    Pack<float> states[kStates > 0 ? kStates : 1];
#pragma unroll
    for (int s = 0; s < kStates; ++s) states[s] = load_pack(op.states[s] + base);
    Pack<P> compute;
#pragma unroll
    for (int e = 0; e < kPackElements; ++e) {
#pragma unroll
      for (int s = 0; s < kStates; ++s) state[s] = states[s].values[e];
      update(params.values[e], static_cast<float>(grads.values[e]), state);
#pragma unroll
      for (int s = 0; s < kStates; ++s) states[s].values[e] = state[s];
      compute.values[e] = P(params.values[e]);
    }
    store_pack(op.params + base, params);
#pragma unroll
    for (int s = 0; s < kStates; ++s) store_pack(op.states[s] + base, states[s]);
    if (op.compute != nullptr) store_pack(op.compute + base, compute);
  }
  for (std::int64_t i = op.packs * kPackElements + first; i < op.n; i += stride) {
#pragma unroll
    for (int s = 0; s < kStates; ++s) state[s] = op.states[s][i];
    update(op.params[i], static_cast<float>(op.grads[i]), state);
#pragma unroll
    for (int s = 0; s < kStates; ++s) op.states[s][i] = state[s];
    if (op.compute != nullptr) op.compute[i] = P(op.params[i]);
  }
}

// Enqueues the kernel over `op` (its packs decided here) on `stream`.
template <int kStates, typename G, typename P, typename Update>
void launch_fused_step(const char* name, StepOperands<kStates, G, P> op, Update update,
                       void* stream) {
  if (op.n == 0) return;
  bool aligned = aligned_16(op.params) && aligned_16(op.grads) && aligned_16(op.compute);
  for (int s = 0; s < kStates; ++s) aligned = aligned && aligned_16(op.states[s]);
  op.packs = aligned ? op.n / kPackElements : 0;
  const std::int64_t tail = op.n - op.packs * kPackElements;
  fused_step_kernel<<<blocks_for(op.packs > tail ? op.packs : tail), kThreadsPerBlock, 0,
                      static_cast<cudaStream_t>(stream)>>>(op, update);
  check_launch(name, op.n);
}

// The element updates, as the kernel calls them.
struct AdamElement {
  math::AdamStepScalars scalars;
  __device__ void operator()(float& param, float grad, float* state) const {
    math::adam_update(param, grad, state[0], state[1], scalars);
  }
};

template <bool kMomentum>
struct SgdElement {
  float lr;
  float momentum;
  float weight_decay;
  bool nesterov;
  __device__ void operator()(float& param, float grad, float* state) const {
    // sgd_update leaves the buffer untouched when momentum == 0; then there is none.
    float unused = 0.0f;
    math::sgd_update(param, grad, kMomentum ? state[0] : unused, lr, momentum, weight_decay,
                     nesterov);
  }
};

}  // namespace

template <typename G, typename P>
void sgd_step(float* params, const G* grads, float* momentum_buffer, P* compute_params,
              std::int64_t n, float lr, float momentum, float weight_decay, bool nesterov,
              void* stream) {
  ZT_CHECK(momentum == 0.0f || momentum_buffer != nullptr,
           "sgd_step: momentum " + std::to_string(momentum) + " needs a momentum buffer");
  if (momentum == 0.0f) {
    launch_fused_step("sgd_kernel", StepOperands<0, G, P>{params, {}, grads, compute_params, n, 0},
                      SgdElement<false>{lr, momentum, weight_decay, nesterov}, stream);
  } else {
    launch_fused_step("sgd_momentum_kernel",
                      StepOperands<1, G, P>{params, {momentum_buffer}, grads, compute_params, n, 0},
                      SgdElement<true>{lr, momentum, weight_decay, nesterov}, stream);
  }
}

template <typename G, typename P>
void adam_step(float* params, const G* grads, float* m, float* v, P* compute_params, std::int64_t n,
               const math::AdamStepScalars& scalars, void* stream) {
  launch_fused_step("adam_kernel",
                    StepOperands<2, G, P>{params, {m, v}, grads, compute_params, n, 0},
                    AdamElement{scalars}, stream);
}

#define ZT_INSTANTIATE(G, P)                                                                    \
  template void sgd_step<G, P>(float*, const G*, float*, P*, std::int64_t, float, float, float, \
                               bool, void*);                                                    \
  template void adam_step<G, P>(float*, const G*, float*, float*, P*, std::int64_t,             \
                                const math::AdamStepScalars&, void*);
#define ZT_INSTANTIATE_FOR_GRADIENTS(G) \
  ZT_INSTANTIATE(G, float)              \
  ZT_INSTANTIATE(G, BF16)               \
  ZT_INSTANTIATE(G, F16)
ZT_INSTANTIATE_FOR_GRADIENTS(float)
ZT_INSTANTIATE_FOR_GRADIENTS(BF16)
ZT_INSTANTIATE_FOR_GRADIENTS(F16)
#undef ZT_INSTANTIATE_FOR_GRADIENTS
#undef ZT_INSTANTIATE

}  // namespace zt::optim::cuda
