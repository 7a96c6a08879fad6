// CPU rotary embedding: one head row (head_dim contiguous values) at a time, turned in place
// when f32, else widened into one row of tracked workspace and rounded back once. On a meta
// device only the workspace is allocated (Note [Dry kernels]).
#include "nn/kernels/cpu/rope_cpu.h"

#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/llama_op_checks.h"
#include "nn/kernels/math/rope_math.h"

namespace zt::nn::cpu {

void rope_rotate(const AttentionHeads& heads, std::int64_t start_position, float theta,
                 bool inverse, MemoryTracker& tracker) {
  check_rope_heads(heads, start_position, theta, inverse ? "d_heads" : "heads");
  const bool in_place = heads.base.dtype() == DType::kF32;
  const Tensor scratch = in_place ? Tensor()
                                  : Tensor::zeros(Shape{heads.head_dim}, DType::kF32, tracker,
                                                  MemoryCategory::kWorkspace);
  if (heads.base.device().meta) return;
  for (std::int64_t b = 0; b < heads.batch; ++b) {
    for (std::int64_t t = 0; t < heads.seq_len; ++t) {
      for (std::int64_t h = 0; h < heads.n_heads; ++h) {
        const std::int64_t start = heads.row_start(b, t, h);
        float* row = in_place ? heads.base.data_as<float>() + start : scratch.data_as<float>();
        if (!in_place) load_f32(heads.base, start, heads.head_dim, row);
        math::rope_rotate_row(row, heads.head_dim, start_position + t, theta, inverse);
        if (!in_place) store_from_f32(row, heads.base, start, heads.head_dim);
      }
    }
  }
}

}  // namespace zt::nn::cpu
