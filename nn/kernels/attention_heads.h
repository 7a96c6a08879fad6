// The head geometry of a (B, T, 3C) qkv tensor, checked once: what every backend's attention
// kernels index by. Host code only (it checks with ZT_CHECK).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/error.h"
#include "core/tensor.h"

namespace zt::nn {

struct AttentionHeads {
  std::int64_t batch;
  std::int64_t seq_len;
  std::int64_t channels;
  std::int64_t n_head;
  std::int64_t head_size;
  float scale() const { return 1.0f / std::sqrt(static_cast<float>(head_size)); }
};

inline AttentionHeads attention_heads_of(const Tensor& qkv, std::int64_t n_head) {
  ZT_CHECK(qkv.rank() == 3 && qkv.dim(2) % 3 == 0,
           "attention qkv must be (B, T, 3C), got " + qkv.shape().to_string());
  const std::int64_t channels = qkv.dim(2) / 3;
  ZT_CHECK(n_head > 0 && channels % n_head == 0, "attention channels not a multiple of n_head");
  return {qkv.dim(0), qkv.dim(1), channels, n_head, channels / n_head};
}

}  // namespace zt::nn
