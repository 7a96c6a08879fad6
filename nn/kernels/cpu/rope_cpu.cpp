// CPU rotary embedding: for each (position, pair) the angle's cos and sin are computed once
// and the pair is turned in every head of every batch row at that position, read from and
// written to the heads' own storage (widened to f32, rounded once), so no workspace is
// needed and a meta device has nothing to replay (Note [Dry kernels]).
#include "nn/kernels/cpu/rope_cpu.h"

#include <cmath>

#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/llama_op_checks.h"
#include "nn/kernels/math/rope_math.h"

namespace zt::nn::cpu {

void rope_rotate(const AttentionHeads& heads, std::int64_t start_position, float theta,
                 bool inverse) {
  check_rope_heads(heads, start_position, theta, inverse ? "d_heads" : "heads");
  if (heads.base.device().meta) return;
  const std::int64_t half = heads.head_dim / 2;
  dispatch_floating(heads.base.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* base = heads.base.data_as<T>();
    for (std::int64_t t = 0; t < heads.seq_len; ++t) {
      for (std::int64_t i = 0; i < half; ++i) {
        const float angle = math::rope_angle(start_position + t, i, heads.head_dim, theta);
        const float cos_angle = std::cos(angle);
        const float sin_angle = inverse ? -std::sin(angle) : std::sin(angle);
        for (std::int64_t b = 0; b < heads.batch; ++b) {
          for (std::int64_t h = 0; h < heads.n_heads; ++h) {
            T* row = base + heads.row_start(b, t, h);
            float y0 = 0.0f;
            float y1 = 0.0f;
            math::rope_rotate_pair(static_cast<float>(row[i]), static_cast<float>(row[i + half]),
                                   cos_angle, sin_angle, &y0, &y1);
            row[i] = T(y0);
            row[i + half] = T(y1);
          }
        }
      }
    }
  });
}

}  // namespace zt::nn::cpu
