// The CPU kernel backend: oneDNN GEMMs and loops over the shared math. bf16 operands go
// straight into oneDNN's bf16 GEMM (f32 accumulation) where the CPU has one; otherwise
// bf16/f16 operands are widened to f32 scratch for sgemm. Results are computed in f32 and
// rounded once; a Linear's bias and fused GELU run over its f32 product row by row.
#include "nn/kernels/cpu/cpu_kernel_backend.h"

#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>

#include "core/error.h"
#include "core/parallel_for.h"
#include "nn/kernels/block_quant_checks.h"
#include "nn/kernels/cpu/add_cpu.h"
#include "nn/kernels/cpu/attention_cpu.h"
#include "nn/kernels/cpu/bias_cpu.h"
#include "nn/kernels/cpu/block_quant_cpu.h"
#include "nn/kernels/cpu/cross_entropy_cpu.h"
#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/cpu/gelu_cpu.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "nn/kernels/cpu/layer_norm_cpu.h"
#include "nn/kernels/cpu/rms_norm_cpu.h"
#include "nn/kernels/cpu/rope_cpu.h"
#include "nn/kernels/cpu/swiglu_cpu.h"
#include "nn/kernels/cpu/token_select_cpu.h"
#include "nn/kernels/math/activation_math.h"
#include "nn/kernels/math/bias_residual_math.h"
#include "nn/kernels/math/dropout_math.h"
#include "nn/kernels/math/embedding_math.h"
#include "nn/kernels/token_ids.h"

namespace zt::nn::cpu {
namespace {

// Channels a chunk of the embedding backward takes (Note [Chunks fixed by size]): two cache
// lines of f32, widened on the stack.
constexpr std::int64_t kEmbeddingChannelGrain = 32;

// c (m, n) = alpha op(a) (m, k) · op(b) (k, n) + beta · c, a and b in the compute dtype, c f32.
void gemm_compute(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                  std::int64_t k, float alpha, const Tensor& a, std::int64_t lda, const Tensor& b,
                  std::int64_t ldb, float beta, float* c, std::int64_t ldc,
                  MemoryTracker& tracker) {
  if (a.dtype() == DType::kBF16 && b.dtype() == DType::kBF16 && bf16_gemm_available()) {
    if (a.device().meta) return;
    gemm_bf16(transpose_a, transpose_b, m, n, k, alpha, a.data_as<BF16>(), lda, b.data_as<BF16>(),
              ldb, beta, c, ldc);
    return;
  }
  const Tensor a32 = to_f32_scratch(a, tracker);
  const Tensor b32 = to_f32_scratch(b, tracker);
  if (a.device().meta) return;  // the operands' workspace counted, no arithmetic
  gemm_f32(transpose_a, transpose_b, m, n, k, alpha, a32.data_as<float>(), lda,
           b32.data_as<float>(), ldb, beta, c, ldc);
}

// Note [Dry kernels]
// On a meta device (Note [Meta devices]) every op makes the workspace allocations it makes on
// the CPU, in the same order and lifetimes, and skips the arithmetic: the estimator's tracker
// then sees this backend's workspace exactly. `dry` marks the point after the last allocation
// that precedes arithmetic; loads and stores of meta tensors are no-ops (dtype_io.cpp). A meta
// device standing for a GPU gets the CUDA backend's dry twin instead (cuda_dry_kernel_backend),
// which allocates through the functions the CUDA kernels allocate through (cuda_workspace.h).
bool dry(const DeviceContext& device) { return device.device().meta; }

MemoryTracker& tracker_of(DeviceContext& device) {
  ZT_CHECK(device.device().kind == DeviceKind::kCpu || dry(device),
           "the CPU kernel backend was given the context of " + device.device().to_string());
  return device.tracker();
}

// Note [GELU in the GEMMs] (the CPU side): the work cuBLASLt's epilogues do on the GPU runs
// here over the f32 GEMM result a row at a time, before it is rounded into its dtype.

// Forward epilogue over y32 (rows, cols), the f32 product x · W^T: adds the bias (when given)
// and, when pre_gelu is defined, writes that value rounded into pre_gelu and keeps gelu of it
// (gelu_cpu.h's vector loop over the row). Rows in parallel (Note [Chunks fixed by size]).
void linear_forward_epilogue(float* y32, const float* bias, std::int64_t rows, std::int64_t cols,
                             const Tensor& pre_gelu) {
  if (bias == nullptr && !pre_gelu.defined()) return;
  dispatch_floating(pre_gelu.defined() ? pre_gelu.dtype() : DType::kF32, [&](auto tag) {
    using T = decltype(tag);
    T* pre = pre_gelu.defined() ? pre_gelu.data_as<T>() : nullptr;
    parallel_for(rows, parallel_row_grain(cols), [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t n = first; n < last; ++n) {
        float* row = y32 + n * cols;
        if (bias != nullptr) add_bias_f32(row, bias, cols);
        if (pre == nullptr) continue;
        round_into(row, pre + n * cols, cols);  // one vector pass (Note [bf16 conversion paths])
        gelu_forward_f32(row, row, cols);
      }
    });
  });
}

// Columns a chunk of a column sum takes at least: 1 KiB of each f32 row, read in row tiles
// (Note [Column sums in registers]); narrower chunks read more scattered memory, measured
// slower on a 1024 x 1024 gradient.
constexpr std::int64_t kColumnSumGrain = 256;

// Columns a bf16/f16 column sum widens at a time, kWidenRows rows of them (on the stack).
constexpr std::int64_t kWidenColumns = kColumnSumGrain;
constexpr std::int64_t kWidenRows = 16;

// sums[c] += Σ_n values[n, c] over the rows of values (rows, cols), row after row for every
// column as one thread would (bias_cpu.h): chunks of columns in parallel, so a bias gradient
// has the same bits on any thread count. bf16/f16 values are widened a tile at a time.
template <typename T>
void add_column_sums(const T* values, std::int64_t rows, std::int64_t cols, float* sums) {
  const std::int64_t column_grain = std::max(kColumnSumGrain, parallel_row_grain(rows));
  parallel_for(cols, column_grain, [&](std::int64_t first, std::int64_t last) {
    if constexpr (std::is_same_v<T, float>) {
      add_column_sums_f32(values + first, rows, last - first, cols, sums + first);
    } else {
      float tile[kWidenRows * kWidenColumns];
      for (std::int64_t column = first; column < last; column += kWidenColumns) {
        const std::int64_t width = std::min(kWidenColumns, last - column);
        for (std::int64_t row = 0; row < rows; row += kWidenRows) {
          const std::int64_t height = std::min(kWidenRows, rows - row);
          for (std::int64_t n = 0; n < height; ++n) {
            widen_into(values + (row + n) * cols + column, tile + n * width, width);
          }
          add_column_sums_f32(tile, height, width, width, sums + column);
        }
      }
    }
  });
}

// Backward epilogue over dx32 (rows, cols), the f32 product dy · W: the gradient at the GELU's
// output becomes the gradient at its input (rows in parallel, pre_rows' scratch per chunk),
// then is summed into dbias (when given).
void gelu_backward_epilogue(float* dx32, const F32Rows& pre_rows, std::int64_t rows,
                            std::int64_t cols, float* dbias) {
  parallel_for_chunks(rows, parallel_row_grain(cols),
                      [&](std::int64_t chunk, std::int64_t first, std::int64_t last) {
                        for (std::int64_t n = first; n < last; ++n) {
                          float* row = dx32 + n * cols;
                          gelu_backward_f32(pre_rows.load(n, chunk), row, row, cols);
                        }
                      });
  if (dbias != nullptr) add_column_sums(dx32, rows, cols, dbias);
}

// The chunks a row loop over `rows` rows of `row_elements` is cut into (F32Rows' scratch).
std::int64_t row_chunks(std::int64_t rows, std::int64_t row_elements) {
  return std::max<std::int64_t>(1, parallel_chunk_count(rows, parallel_row_grain(row_elements)));
}

class CpuKernelBackend final : public KernelBackend {
 public:
  const Device& device() const override { return device_; }

  void gemm(DeviceContext& device, bool transpose_a, bool transpose_b, float alpha, const Tensor& a,
            const Tensor& b, float beta, const Tensor& c) const override {
    MemoryTracker& tracker = tracker_of(device);
    ZT_CHECK(a.rank() == 2 && b.rank() == 2 && c.rank() == 2, "gemm over non-matrices");
    expect_dtype(b, a.dtype(), "gemm b");
    const std::int64_t m = transpose_a ? a.dim(1) : a.dim(0);
    const std::int64_t k = transpose_a ? a.dim(0) : a.dim(1);
    const std::int64_t n = transpose_b ? b.dim(0) : b.dim(1);
    ZT_CHECK((transpose_b ? b.dim(1) : b.dim(0)) == k && c.dim(0) == m && c.dim(1) == n,
             "gemm shapes do not match");
    // beta != 0 reads c: a non-f32 c is widened first, then rounded back once.
    const F32Output out(c, tracker);
    if (c.dtype() != DType::kF32 && beta != 0.0f) load_f32(c, 0, c.numel(), out.data());
    gemm_compute(transpose_a, transpose_b, m, n, k, alpha, a, a.dim(1), b, b.dim(1), beta,
                 out.data(), n, tracker);
    out.store();
  }

  void linear_forward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                      const Tensor& bias, const Tensor& y, const Tensor& pre_gelu) const override {
    MemoryTracker& tracker = tracker_of(device);
    const std::int64_t out_features = weight.dim(0);
    const std::int64_t in_features = weight.dim(1);
    const std::int64_t rows = x.numel() / in_features;
    if (pre_gelu.defined()) {
      expect_dtype(pre_gelu, y.dtype(), "linear_forward pre_gelu");
      ZT_CHECK(pre_gelu.numel() == y.numel(), "linear_forward: pre_gelu is not y's size");
    }
    const F32Output y32(y, tracker);
    const Tensor bias32 = bias.defined() ? to_f32_scratch(bias, tracker) : Tensor();
    gemm_compute(false, true, rows, out_features, in_features, 1.0f, x, in_features, weight,
                 in_features, 0.0f, y32.data(), out_features, tracker);
    if (dry(device)) return;
    linear_forward_epilogue(y32.data(), bias.defined() ? bias32.data_as<float>() : nullptr, rows,
                            out_features, pre_gelu);
    y32.store();
  }

  void linear_backward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                       const Tensor& dy, const Tensor& dx, const Tensor& dweight,
                       const Tensor& dbias, const Tensor& x_pre_gelu,
                       const Tensor& x_pre_gelu_dbias) const override {
    MemoryTracker& tracker = tracker_of(device);
    const std::int64_t out_features = weight.dim(0);
    const std::int64_t in_features = weight.dim(1);
    const std::int64_t rows = x.numel() / in_features;
    ZT_CHECK(x_pre_gelu.defined() || !x_pre_gelu_dbias.defined(),
             "linear_backward: a pre-GELU bias gradient without the pre-GELU input");
    {
      const F32Output dx32(dx, tracker);
      gemm_compute(false, false, rows, in_features, out_features, 1.0f, dy, out_features, weight,
                   in_features, 0.0f, dx32.data(), in_features, tracker);
      if (x_pre_gelu.defined()) {
        expect_dtype(x_pre_gelu, x.dtype(), "linear_backward x_pre_gelu");
        ZT_CHECK(x_pre_gelu.numel() == x.numel(), "linear_backward: x_pre_gelu is not x's size");
        const F32Rows pre_rows(x_pre_gelu, in_features, tracker, row_chunks(rows, in_features));
        if (!dry(device)) {
          gelu_backward_epilogue(
              dx32.data(), pre_rows, rows, in_features,
              x_pre_gelu_dbias.defined() ? x_pre_gelu_dbias.data_as<float>() : nullptr);
        }
      }
      dx32.store();
    }
    gemm_compute(true, false, out_features, in_features, rows, 1.0f, dy, out_features, x,
                 in_features, 1.0f, dweight.data_as<float>(), in_features, tracker);
    if (dbias.defined()) {
      if (dry(device)) return;
      dispatch_floating(dy.dtype(), [&](auto tag) {
        using T = decltype(tag);
        add_column_sums(dy.data_as<T>(), rows, out_features, dbias.data_as<float>());
      });
    }
  }

  void gelu_forward(DeviceContext& device, const Tensor& x, const Tensor& y) const override {
    (void)tracker_of(device);
    if (dry(device)) return;
    cpu::gelu_forward(x, y);
  }
  void gelu_backward(DeviceContext& device, const Tensor& x, const Tensor& dy,
                     const Tensor& dx) const override {
    (void)tracker_of(device);
    if (dry(device)) return;
    cpu::gelu_backward(x, dy, dx);
  }
  void relu_forward(DeviceContext& device, const Tensor& x, const Tensor& y) const override {
    (void)tracker_of(device);
    if (dry(device)) return;
    map_elements(x, y, [](float v) { return math::relu_forward(v); });
  }
  void relu_backward(DeviceContext& device, const Tensor& x, const Tensor& dy,
                     const Tensor& dx) const override {
    (void)tracker_of(device);
    if (dry(device)) return;
    zip_elements(x, dy, dx, [](float v, float d) { return math::relu_backward(v, d); });
  }

  // The residual add of every block: one f32 addition per element on the widest vector path
  // (add_cpu.h); bf16/f16 operands are widened a block at a time on the stack and the sums
  // rounded once, the bits of zip_elements' scalar loop.
  void add(DeviceContext& device, const Tensor& a, const Tensor& b,
           const Tensor& out) const override {
    (void)tracker_of(device);
    if (dry(device)) return;
    expect_dtype(b, a.dtype(), "add second operand");
    expect_dtype(out, a.dtype(), "add output");
    ZT_CHECK(b.numel() == a.numel() && out.numel() == a.numel(),
             "add over tensors of different sizes");
    zip_f32_blocks(a, b, out, [](const float* x, const float* y, float* sum, std::int64_t count) {
      add_f32(x, y, sum, count);
    });
  }

  // Chunks of elements in parallel; each element's bit depends on its coordinates only, so
  // the chunking cannot change the result.
  void dropout(DeviceContext& device, const math::DropoutMask& mask, const Tensor& x,
               const Tensor& y) const override {
    (void)tracker_of(device);
    if (dry(device)) return;
    expect_dtype(y, x.dtype(), "dropout output");
    ZT_CHECK(y.numel() == x.numel() && x.rank() > 0, "dropout over tensors of different sizes");
    const std::int64_t samples = x.dim(0);
    const std::int64_t row_elements = samples == 0 ? 0 : x.numel() / samples;
    dispatch_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* xs = x.data_as<T>();
      T* ys = y.data_as<T>();
      parallel_for(x.numel(), kParallelGrainElements, [&](std::int64_t begin, std::int64_t end) {
        std::int64_t sample = begin / row_elements;
        std::int64_t index = begin % row_elements;
        std::uint64_t row = math::dropout_row(mask.stream, mask.first_sample + sample);
        for (std::int64_t i = begin; i < end; ++i) {
          const bool keep = math::dropout_keep(row, index, mask.threshold);
          ys[i] = T(math::dropout_apply(static_cast<float>(xs[i]), keep, mask.scale));
          if (++index == row_elements) {
            index = 0;
            row = math::dropout_row(mask.stream, mask.first_sample + ++sample);
          }
        }
      });
    });
  }

  void layer_norm_forward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                          const Tensor& bias, float eps, const Tensor& y, const Tensor& mean,
                          const Tensor& rstd) const override {
    cpu::layer_norm_forward(x, weight, bias, eps, y, mean, rstd, tracker_of(device));
  }

  void layer_norm_backward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                           const Tensor& mean, const Tensor& rstd, const Tensor& dy,
                           const Tensor& dx, const Tensor& dweight,
                           const Tensor& dbias) const override {
    cpu::layer_norm_backward(x, weight, mean, rstd, dy, dx, dweight, dbias, tracker_of(device));
  }

  void attention_forward(DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
                         const AttentionHeads& v, const AttentionHeads& o, const Tensor& lse,
                         const math::DropoutMask* probs_dropout) const override {
    cpu::attention_forward(q, k, v, o, lse, tracker_of(device),
                           cpu::Bf16AttentionProducts::kBf16WhereAvailable, probs_dropout);
  }
  void attention_backward(DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
                          const AttentionHeads& v, const AttentionHeads& o, const Tensor& lse,
                          const AttentionHeads& d_o, const AttentionHeads& dq,
                          const AttentionHeads& dk, const AttentionHeads& dv,
                          const math::DropoutMask* probs_dropout) const override {
    cpu::attention_backward(q, k, v, o, lse, d_o, dq, dk, dv, tracker_of(device),
                            cpu::Bf16AttentionProducts::kBf16WhereAvailable, probs_dropout);
  }

  void rms_norm_forward(DeviceContext& device, const Tensor& x, const Tensor& weight, float eps,
                        const Tensor& y, const Tensor& rstd) const override {
    cpu::rms_norm_forward(x, weight, eps, y, rstd, tracker_of(device));
  }
  void rms_norm_backward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                         const Tensor& rstd, const Tensor& dy, const Tensor& dx,
                         const Tensor& dweight) const override {
    cpu::rms_norm_backward(x, weight, rstd, dy, dx, dweight, tracker_of(device));
  }
  void rope_forward(DeviceContext& device, const AttentionHeads& heads, std::int64_t start_position,
                    float theta) const override {
    (void)tracker_of(device);
    cpu::rope_rotate(heads, start_position, theta, false);
  }
  void rope_backward(DeviceContext& device, const AttentionHeads& d_heads,
                     std::int64_t start_position, float theta) const override {
    (void)tracker_of(device);
    cpu::rope_rotate(d_heads, start_position, theta, true);
  }
  void swiglu_forward(DeviceContext& device, const Tensor& gate_up,
                      const Tensor& h) const override {
    cpu::swiglu_forward(gate_up, h, tracker_of(device));
  }
  void swiglu_backward(DeviceContext& device, const Tensor& gate_up, const Tensor& dh,
                       const Tensor& d_gate_up) const override {
    cpu::swiglu_backward(gate_up, dh, d_gate_up, tracker_of(device));
  }

  void embedding_forward(DeviceContext& device, const Tensor& ids, const Tensor& wte,
                         const Tensor& wpe, const Tensor& out) const override {
    MemoryTracker& tracker = tracker_of(device);
    const std::int64_t seq_len = ids.dim(1);
    const std::int64_t channels = wte.dim(1);
    const std::int32_t* id = ids.data_as<std::int32_t>();
    if (!dry(device)) check_token_ids(id, ids.numel(), seq_len, wte.dim(0));
    const std::int64_t chunks = row_chunks(ids.numel(), channels);
    const F32Rows wte_rows(wte, channels, tracker, chunks);
    std::optional<F32Rows> wpe_rows;  // none without a position embedding (Llama)
    if (wpe.defined()) wpe_rows.emplace(wpe, channels, tracker, chunks);
    const F32Rows out_rows(out, channels, tracker, chunks);
    if (dry(device)) return;
    parallel_for_chunks(ids.numel(), parallel_row_grain(channels),
                        [&](std::int64_t chunk, std::int64_t first, std::int64_t last) {
                          for (std::int64_t i = first; i < last; ++i) {
                            math::embedding_forward_row(
                                wte_rows.load(id[i], chunk),
                                wpe_rows ? wpe_rows->load(i % seq_len, chunk) : nullptr, channels,
                                out_rows.out(i, chunk));
                            out_rows.store(i, chunk);
                          }
                        });
  }

  void embedding_backward(DeviceContext& device, const Tensor& ids, const Tensor& dout,
                          const Tensor& dwte, const Tensor& dwpe) const override {
    (void)tracker_of(device);
    const std::int64_t seq_len = ids.dim(1);
    const std::int64_t channels = dwte.dim(1);
    const std::int32_t* id = ids.data_as<std::int32_t>();
    if (dry(device)) return;
    float* dwte_data = dwte.data_as<float>();
    float* dwpe_data = dwpe.defined() ? dwpe.data_as<float>() : nullptr;
    // Tokens repeat, so rows of dwte are shared: chunks of channels in parallel, every token
    // in order within each, so no two threads touch an element and the sums have one order.
    dispatch_floating(dout.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* dout_data = dout.data_as<T>();
      parallel_for(channels, kEmbeddingChannelGrain, [&](std::int64_t first, std::int64_t last) {
        float dout_f32[kEmbeddingChannelGrain];
        const std::int64_t width = last - first;
        for (std::int64_t i = 0; i < ids.numel(); ++i) {
          const T* dout_row = dout_data + i * channels + first;
          for (std::int64_t c = 0; c < width; ++c) dout_f32[c] = static_cast<float>(dout_row[c]);
          math::embedding_backward_row(
              dout_f32, width, dwte_data + id[i] * channels + first,
              dwpe_data ? dwpe_data + (i % seq_len) * channels + first : nullptr);
        }
      });
    });
  }

  void softmax_cross_entropy(DeviceContext& device, const Tensor& logits, const Tensor& targets,
                             std::int64_t classes, float grad_scale, const Tensor& dlogits,
                             double* loss_sum) const override {
    MemoryTracker& tracker = tracker_of(device);
    const std::int64_t columns = logits.dim(logits.rank() - 1);
    const std::int64_t rows = logits.numel() / columns;
    ZT_CHECK(classes > 0 && classes <= columns, "cross-entropy over " + std::to_string(classes) +
                                                    " of " + std::to_string(columns) + " columns");
    // Rows in parallel; the loss sums per chunk, then over chunks in order (parallel_sum).
    const std::int64_t grain = parallel_row_grain(columns);
    const std::int64_t sum_grain = parallel_sum_grain(rows, grain);
    const std::int64_t chunks = std::max<std::int64_t>(1, parallel_chunk_count(rows, sum_grain));
    const F32Rows z(logits, columns, tracker, chunks);
    const F32Rows dz(dlogits, columns, tracker, chunks);
    if (dry(device)) return;
    const std::int32_t* t = targets.data_as<std::int32_t>();
    *loss_sum = parallel_sum(rows, grain, [&](std::int64_t first, std::int64_t last) {
      const std::int64_t chunk = first / sum_grain;
      double sum = 0.0;
      for (std::int64_t n = first; n < last; ++n) {
        ZT_CHECK(t[n] >= 0 && t[n] < classes, "cross-entropy target " + std::to_string(t[n]) +
                                                  " outside [0, " + std::to_string(classes) + ")");
        sum += softmax_cross_entropy_row_f32(z.load(n, chunk), classes, columns, t[n], grad_scale,
                                             dz.out(n, chunk));
        dz.store(n, chunk);
      }
      return sum;
    });
  }

  void select_tokens(DeviceContext& device, const Tensor& logits, std::int64_t classes,
                     const math::TokenSampling& sampling, const Tensor& ids) const override {
    tracker_of(device);  // checks the device
    cpu::select_tokens(logits, classes, sampling, ids);
  }

  void quantize_blocks(DeviceContext& device, const math::BlockQuantFormat& format, const Tensor& x,
                       const Tensor& payload, const Tensor& scales) const override {
    (void)tracker_of(device);
    check_block_quant_operands(format, x, payload, scales, "quantize_blocks");
    if (dry(device)) return;
    dispatch_floating(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cpu::quantize_blocks(x.data_as<T>(), x.numel(), format,
                           static_cast<std::uint8_t*>(payload.data()), scales.data_as<float>());
    });
  }
  void dequantize_blocks(DeviceContext& device, const math::BlockQuantFormat& format,
                         const Tensor& payload, const Tensor& scales,
                         const Tensor& y) const override {
    (void)tracker_of(device);
    check_block_quant_operands(format, y, payload, scales, "dequantize_blocks");
    if (dry(device)) return;
    dispatch_floating(y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      cpu::dequantize_blocks(static_cast<const std::uint8_t*>(payload.data()),
                             scales.data_as<float>(), y.numel(), format, y.data_as<T>());
    });
  }

 private:
  Device device_ = Device::cpu();
};

}  // namespace

const KernelBackend& cpu_kernel_backend() {
  static const CpuKernelBackend backend;
  return backend;
}

}  // namespace zt::nn::cpu
