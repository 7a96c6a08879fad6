// Per-position token + position embedding arithmetic shared by the CPU and CUDA kernels. A
// model without a position embedding (Llama: rotary positions in attention) passes no wpe.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace zt::nn::math {

// forward: out = wte[token] + wpe[t];  wte_row, wpe_row, out (C); out = wte[token] when
// wpe_row is null
ZT_HOST_DEVICE void embedding_forward_row(const float* wte_row, const float* wpe_row,
                                          std::int64_t channels, float* out) {
  for (std::int64_t c = 0; c < channels; ++c) {
    out[c] = wpe_row != nullptr ? wte_row[c] + wpe_row[c] : wte_row[c];
  }
}

// backward: dwte[token] += dout;  dwpe[t] += dout unless dwpe_row is null (a token seen
// twice gets both updates)
ZT_HOST_DEVICE void embedding_backward_row(const float* dout, std::int64_t channels,
                                           float* dwte_row, float* dwpe_row) {
  for (std::int64_t c = 0; c < channels; ++c) {
    dwte_row[c] += dout[c];
    if (dwpe_row != nullptr) dwpe_row[c] += dout[c];
  }
}

// One channel of the forward above, for kernels that give each thread one element (without a
// position embedding the element is wte's).
ZT_HOST_DEVICE float embedding_forward_element(float wte, float wpe) { return wte + wpe; }

}  // namespace zt::nn::math
