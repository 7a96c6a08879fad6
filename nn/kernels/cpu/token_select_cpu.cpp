// Rows one after another: a decode step has few rows, each a pass or a few over the vocabulary.
#include "nn/kernels/cpu/token_select_cpu.h"

#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/token_select_rows.h"

namespace zt::nn::cpu {

void select_tokens(const Tensor& logits, std::int64_t classes, const math::TokenSampling& sampling,
                   const Tensor& ids) {
  const LastLogitRows rows = last_logit_rows(logits, classes, ids);
  if (logits.device().meta) return;  // no workspace, no arithmetic (Note [Dry kernels])
  std::int32_t* out = ids.data_as<std::int32_t>();
  dispatch_floating(logits.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* z = logits.data_as<T>() + rows.first_offset;
    for (std::int64_t b = 0; b < rows.rows; ++b) {
      out[b] = math::select_token(z + b * rows.row_stride, classes, sampling,
                                  static_cast<std::uint64_t>(b));
    }
  });
}

}  // namespace zt::nn::cpu
