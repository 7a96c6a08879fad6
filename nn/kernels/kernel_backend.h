// KernelBackend: every computation nn's layers, models and loss do, over Tensors on one
// device. One backend per device, chosen once (kernel_backend_for) and reached through the
// ModuleContext, so no layer names a CPU or CUDA kernel. The ops are coarse (a Linear's
// GEMMs and bias together, the whole attention core) so that a backend may fuse, thread or
// replace them (flash attention) without the layers changing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/device.h"
#include "core/device/device_context.h"
#include "core/tensor.h"
#include "nn/kernels/attention_heads.h"
#include "nn/kernels/math/block_quant_math.h"
#include "nn/kernels/math/dropout_math.h"
#include "nn/kernels/math/token_select_math.h"

namespace zt::nn {

// Conventions of every op:
// - Tensors live on the backend's device; `device` is the rank's context for that device:
//   workspace is allocated through its tracker (MemoryCategory::kWorkspace, freed before the
//   op returns) and work is enqueued on its compute stream (CPU: done when the call returns).
// - Activations are f32, bf16 or f16 (the compute dtype; a backend may support fewer and
//   then says so); arithmetic is fp32 and each result is rounded once into its dtype.
//   Parameters come in the compute dtype; parameter gradients are always f32 and are
//   accumulated into (+=), so accumulation across micro-batches stays in fp32.
// - Outputs are written in full; their old contents are never read (they may come from
//   Tensor::empty), except where an op says it accumulates.
// - Shapes: N is every leading axis of an activation flattened, C its last axis.
// Note [GELU in the GEMMs]: a Linear's bias and the GELU after it (GPT's fc) belong in the
// GEMM's epilogue, not in kernels of their own (on an H200 the bias-gradient kernel alone
// took 16% of a GPT-2 small step). Forward, linear_forward with pre_gelu keeps the
// pre-activation for backward and writes gelu of it. Backward, the GELU's derivative and its
// Linear's bias gradient are applied to the output of the GEMM that makes the gradient at
// the GELU's output, the next Linear's dx GEMM: that is where a GEMM epilogue can reach them,
// so linear_backward takes its input's pre-activation (x_pre_gelu) and the bias gradient of
// the Linear that wrote it. The CPU backend runs these epilogues as one pass over its f32
// GEMM result; the CUDA backend as cuBLASLt epilogues: BIAS or GELU_AUX_BIAS forward,
// DGELU_BGRAD on dx and BGRADB on dweight backward. cuBLASLt writes a bias gradient where the
// interface accumulates it in f32: it writes into a small f32 workspace (the bias type asked
// for, so a bf16 run loses no bits there), which a one-row bias_backward then adds into the
// f32 gradient. Where cuBLASLt offers no algorithm for an epilogue, the CUDA backend runs the
// plain GEMM and its own kernels instead (Note [Fused when offered] in gemm_plan_cache.h). Each
// CUDA Linear op holds one tracked cuBLAS workspace for its cuBLASLt GEMMs (Note [cuBLAS workspace]
// in nn/kernels/cuda_workspace.h).
class KernelBackend {
 public:
  virtual ~KernelBackend() = default;
  virtual const Device& device() const = 0;

  // c (m, n) = alpha op(a) op(b) + beta c, row-major 2-D tensors: op(a) is a (m, k) or, with
  // transpose_a, a^T of a (k, m); likewise b. a and b share one floating dtype; c is f32 or
  // that dtype. Products accumulate in fp32 (bf16 operands on bf16 hardware paths).
  // beta == 0 ignores c's old contents.
  virtual void gemm(DeviceContext& device, bool transpose_a, bool transpose_b, float alpha,
                    const Tensor& a, const Tensor& b, float beta, const Tensor& c) const = 0;

  // Linear forward: y (N, out) = x (N, in) · weight^T (in, out) + bias (out); `bias` may be
  // undefined (no bias). With `pre_gelu` defined (y's shape and dtype) the GELU that follows
  // the Linear is fused in (Note [GELU in the GEMMs]): pre_gelu = x · weight^T + bias is written
  // for backward and y = gelu(pre_gelu), both rounded once from the same f32 value.
  virtual void linear_forward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                              const Tensor& bias, const Tensor& y,
                              const Tensor& pre_gelu) const = 0;
  // Linear backward: dx (N, in) = dy (N, out) · weight (out, in) is written;
  // dweight (out, in) += dy^T · x and, when dbias is defined, dbias (out) += Σ_n dy[n, :].
  // With `x_pre_gelu` defined (x's shape and dtype: x = gelu(x_pre_gelu), as a fused
  // linear_forward wrote them) the GELU in front of this Linear is differentiated too:
  // dx = gelu'(x_pre_gelu) ⊙ (dy · weight) is the gradient at x_pre_gelu, and when
  // `x_pre_gelu_dbias` (in, f32: the bias gradient of the Linear that wrote x_pre_gelu) is
  // defined, x_pre_gelu_dbias += Σ_n dx[n, :], summed before dx is rounded.
  virtual void linear_backward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                               const Tensor& dy, const Tensor& dx, const Tensor& dweight,
                               const Tensor& dbias, const Tensor& x_pre_gelu,
                               const Tensor& x_pre_gelu_dbias) const = 0;

  // Element-wise activations, y and dx of x's shape and dtype (GELU: tanh approximation).
  virtual void gelu_forward(DeviceContext& device, const Tensor& x, const Tensor& y) const = 0;
  virtual void gelu_backward(DeviceContext& device, const Tensor& x, const Tensor& dy,
                             const Tensor& dx) const = 0;
  virtual void relu_forward(DeviceContext& device, const Tensor& x, const Tensor& y) const = 0;
  virtual void relu_backward(DeviceContext& device, const Tensor& x, const Tensor& dy,
                             const Tensor& dx) const = 0;

  // Residual sum: out = a + b (same element count and dtype). out may be a or b (each
  // element is read before it is written); the Residual layer writes a new tensor, because
  // its child may have saved its output.
  virtual void add(DeviceContext& device, const Tensor& a, const Tensor& b,
                   const Tensor& out) const = 0;

  // Inverted dropout (Note [Dropout masks from a hash] in nn/kernels/math/dropout_math.h):
  // x and y (S, ...) of one dtype and size, row s of the leading axis being sample
  // mask.first_sample + s; y = x * mask.scale where kept, else 0. Its backward is the same op
  // on the gradient (dx from dy with the same mask).
  virtual void dropout(DeviceContext& device, const math::DropoutMask& mask, const Tensor& x,
                       const Tensor& y) const = 0;

  // LayerNorm over the last axis: x, y (N, C); weight, bias (C); mean, rstd (N) f32, written
  // for backward.
  virtual void layer_norm_forward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                                  const Tensor& bias, float eps, const Tensor& y,
                                  const Tensor& mean, const Tensor& rstd) const = 0;
  // dx (N, C) is written; dweight, dbias (C) f32 accumulate.
  virtual void layer_norm_backward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                                   const Tensor& mean, const Tensor& rstd, const Tensor& dy,
                                   const Tensor& dx, const Tensor& dweight,
                                   const Tensor& dbias) const = 0;

  // RMSNorm over the last axis (Llama's norm: no mean subtracted, no bias): x, y (N, C);
  // weight (C); rstd (N) f32, written for backward.
  //   rstd = 1 / sqrt(Σ_c x^2 / C + eps);  y = x * rstd * weight
  virtual void rms_norm_forward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                                float eps, const Tensor& y, const Tensor& rstd) const = 0;
  // dx (N, C) = rstd * (g - n * mean(g * n)), g = dy * weight, n = x * rstd, is written;
  // dweight (C) f32 += Σ_n dy * n.
  virtual void rms_norm_backward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                                 const Tensor& rstd, const Tensor& dy, const Tensor& dx,
                                 const Tensor& dweight) const = 0;

  // Note [Rotary pairs]
  // Rotary position embedding (RoPE) turns pair i of every head of position t by the angle
  // (start_position + t) * theta^(-2i / head_dim) (Note [Rotary angles] in
  // nn/kernels/math/rope_math.h). The pairs are Hugging Face's half split, (x_i,
  // x_{i + head_dim/2}) for i < head_dim / 2 (its rotate_half), not the interleaved
  // (x_2i, x_2i+1) of GPT-J and Meta's original Llama code: Hugging Face's q_proj and k_proj
  // rows are already permuted for the half split, so its checkpoints load with their rows
  // as they are (Meta's original ones would need Hugging Face's conversion permutation).
  // The op works in place on strided heads (Note [Attention operands]), so attention reads
  // q and k rotated where the qkv projection wrote them, and the rotated qkv is what
  // attention's backward needs. positions start at start_position (a decode step of a KV
  // cache rotates its one new position p with start_position = p); every batch row shares
  // them. head_dim is even; each value is read, turned in f32 and rounded once.
  virtual void rope_forward(DeviceContext& device, const AttentionHeads& heads,
                            std::int64_t start_position, float theta) const = 0;
  // The gradient through rope_forward, in place: the rotation's transpose, a turn by -angle,
  // applied to the gradient at the rotated heads gives the gradient at the unrotated ones.
  virtual void rope_backward(DeviceContext& device, const AttentionHeads& d_heads,
                             std::int64_t start_position, float theta) const = 0;

  // Note [SwiGLU column order]
  // SwiGLU (Llama's MLP activation) reads one (N, 2F) GEMM output whose first F columns are
  // the gate and the last F the up projection, so the fc weight (2F, C) is Hugging Face's
  // gate_proj.weight rows followed by up_proj.weight rows:
  //   h (N, F) = silu(gate) * up,  silu(x) = x * sigmoid(x)
  virtual void swiglu_forward(DeviceContext& device, const Tensor& gate_up,
                              const Tensor& h) const = 0;
  // d_gate_up (N, 2F) = [dh * up * silu'(gate) | dh * silu(gate)] is written, silu
  // recomputed from gate_up. d_gate_up may be gate_up itself (each pair of elements is read
  // before it is written), which lets a layer reuse its saved gate_up for the gradient.
  virtual void swiglu_backward(DeviceContext& device, const Tensor& gate_up, const Tensor& dh,
                               const Tensor& d_gate_up) const = 0;

  // Causal scaled-dot-product attention, the core of self-attention between its projections.
  // q (B, T, nh, hs), k and v (B, T_kv, nkv, hs) are strided heads read in place (Note
  // [Attention operands] in attention_heads.h); nkv divides nh (grouped-query attention;
  // nkv == nh is multi-head). T_kv >= T: the queries are the last T positions (a KV cache,
  // Note [Longer key sequence]); in training T_kv == T. Query head h of position t (counted
  // among the keys) sees keys 0..t of kv head h / (nh / nkv):
  //   S = q k^T / sqrt(hs);  lse_t = log Σ_{j<=t} exp(S_tj);  P_tj = exp(S_tj - lse_t)
  //   o (B, T, nh, hs) = P v;  lse (B, nh, T) f32, kept for backward instead of P.
  // Both are written. No (B, nh, T, T) tensor outlives the call. With `probs_dropout` (a
  // training step's, T_kv == T; null: none) P is dropped after its softmax, o = (P ∘ Z) v, and
  // lse stays the undropped scores' (Note [Attention dropout] in
  // nn/kernels/math/attention_dropout_math.h: the mask of P(b, h, i, j) is a hash of its
  // coordinates).
  virtual void attention_forward(DeviceContext& device, const AttentionHeads& q,
                                 const AttentionHeads& k, const AttentionHeads& v,
                                 const AttentionHeads& o, const Tensor& lse,
                                 const math::DropoutMask* probs_dropout = nullptr) const = 0;
  // The gradients of attention_forward at q, k and v given d_o = dL/do and forward's o and
  // lse: P is recomputed from q, k and lse, and D_t = Σ_d dO_td O_td stands in for
  // Σ_j P_tj dP_tj (flash attention's backward). Training's only: T_kv == T. dq, dk and dv (q's,
  // k's and v's shapes) are written; a kv head's gradient sums over the query heads that read it.
  // `probs_dropout` is forward's, whose mask is drawn again (Note [Attention dropout]).
  virtual void attention_backward(DeviceContext& device, const AttentionHeads& q,
                                  const AttentionHeads& k, const AttentionHeads& v,
                                  const AttentionHeads& o, const Tensor& lse,
                                  const AttentionHeads& d_o, const AttentionHeads& dq,
                                  const AttentionHeads& dk, const AttentionHeads& dv,
                                  const math::DropoutMask* probs_dropout = nullptr) const = 0;

  // Token + position embedding: ids (B, T) i32, wte (V, C), wpe (maxT, C) -> out (B, T, C)
  // = wte[ids] + wpe[t]; wpe undefined: out = wte[ids] (a token embedding only, Llama). Ids are
  // user data, checked on the host when the batch is read (Embedding::check_input); the CPU backend
  // checks again (FormatError naming the batch row and position, before anything is written), a
  // device backend traps on a bad id.
  virtual void embedding_forward(DeviceContext& device, const Tensor& ids, const Tensor& wte,
                                 const Tensor& wpe, const Tensor& out) const = 0;
  // dwte[ids] += dout;  dwpe[t] += dout unless dwpe is undefined (f32 gradients; a token seen
  // twice gets both).
  virtual void embedding_backward(DeviceContext& device, const Tensor& ids, const Tensor& dout,
                                  const Tensor& dwte, const Tensor& dwpe) const = 0;

  // Fused softmax cross-entropy over the first `classes` columns of logits (N, C), classes <=
  // C, with targets (N) i32 in [0, classes): writes dlogits (logits' shape and dtype) =
  // (softmax - onehot) * grad_scale there and 0 in the padded columns [classes, C) (Note
  // [Padded vocabulary] in nn/kernels/math/cross_entropy_math.h), and *loss_sum = Σ_n -log
  // p_n(target), each row's loss in fp32 and the sum in double (CPU: in row order; CUDA: one
  // block's fixed order). loss_sum is host memory (the device's host staging memory, pinned on
  // CUDA) written by work on the compute stream: the host does not wait here, and reads it once
  // the compute stream has run past this op.
  virtual void softmax_cross_entropy(DeviceContext& device, const Tensor& logits,
                                     const Tensor& targets, std::int64_t classes, float grad_scale,
                                     const Tensor& dlogits, double* loss_sum) const = 0;

  // Next-token selection for decoding (Note [Selecting a token in integers] in
  // nn/kernels/math/token_select_math.h): for each row b of logits (B, C) or (B, T, C) in the
  // compute dtype, reading its last position, over its first `classes` columns (classes <= C;
  // the padded ones are never chosen: Note [Padded vocabulary]), writes ids[b] (B elements,
  // i32, on this device): the greedy id at sampling.temperature 0, else the id drawn with draw
  // sampling.step of row b's stream of sampling.seed. Every backend writes the same ids for the
  // same logits. No workspace; the host does not wait (CPU: done when the call returns).
  virtual void select_tokens(DeviceContext& device, const Tensor& logits, std::int64_t classes,
                             const math::TokenSampling& sampling, const Tensor& ids) const = 0;

  // Block quantization for the quantized collectives (qwZ, qgZ), the wire format of Note
  // [Block quantization format] in nn/kernels/math/block_quant_math.h. Called per slice of a
  // flat buffer: blocks start at the slice's first element, the last one may be short.
  // x (count) f32, bf16 or f16 -> payload (quant_payload_words) i32 words holding the packed
  // bytes, the padding after them 0, and scales (quant_block_count) f32. Every backend writes
  // the same bits; no workspace.
  virtual void quantize_blocks(DeviceContext& device, const math::BlockQuantFormat& format,
                               const Tensor& x, const Tensor& payload,
                               const Tensor& scales) const = 0;
  // The inverse: y (count) f32 or a compute dtype, each element q * scale rounded once.
  virtual void dequantize_blocks(DeviceContext& device, const math::BlockQuantFormat& format,
                                 const Tensor& payload, const Tensor& scales,
                                 const Tensor& y) const = 0;
};

// Which kernels run a CUDA backend's attention (runtime.attention, resolved by the runtime):
// kRows, the batched cuBLAS GEMMs and row kernels in fp32 (nn/kernels/cuda/cuda_attention.cpp);
// kCudnn, cuDNN's fused flash attention for bf16 operands (Note [cuDNN attention] in
// nn/kernels/cuda_workspace.h), f32 operands still on rows. The CPU backend has one attention.
enum class CudaAttention { kRows, kCudnn };

// The backend for `device` (and, on CUDA, `attention`), created at its first use and kept for
// the process. Throws ConfigError for a CUDA device when this binary was built without the
// CUDA backend or its module cannot be loaded (core/device/cuda_module.h), and for kCudnn
// when it was built without the cuDNN attention.
const KernelBackend& kernel_backend_for(const Device& device,
                                        CudaAttention attention = CudaAttention::kRows);

// Whether this binary has the cuDNN attention (found cuDNN 9 and its frontend when built).
bool cudnn_attention_built();
// Why not, for an error message ("configure did not find cuDNN 9 ..."). Empty when built.
std::string cudnn_attention_missing();
// "cuDNN 9.19.0 at build, 9.14.0 at run time": the version compiled against (CUDNN_VERSION)
// and the one the loader found (cudnnGetVersion); empty when the cuDNN attention is not built.
std::string cudnn_versions();

// Why cuDNN cannot run a training step's attention over `shape` in `dtype` on `device`
// (Note [cuDNN attention never ends a run] in nn/kernels/cuda/cudnn/cudnn_attention.h):
// cuDNN's reason for refusing the forward or backward graph, or that libcudnn.so.9 cannot be
// opened, or that this build has no cuDNN attention; nullopt when cuDNN built both graphs,
// which the device's cuDNN backend then keeps for the run. A meta device (the estimator)
// builds nothing and answers nullopt. Loads the CUDA module (throws as kernel_backend_for).
std::optional<std::string> cudnn_attention_refusal(const Device& device,
                                                   const AttentionShape& shape, DType dtype);

}  // namespace zt::nn
