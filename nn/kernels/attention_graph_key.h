// AttentionGraphKey: what a fused-attention graph (cuDNN's SDPA) is built from, so that one
// graph serves every call that agrees on it. Host code, no CUDA header, tested on the CPU.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "core/dtype.h"
#include "nn/kernels/attention_heads.h"

namespace zt::nn {

// A graph is built for the call's geometry, dtype and direction and for each operand's
// strides; the operands' addresses (their base tensors and offsets) are bound per call, so
// calls on other tensors of the same layout (every layer, every micro-batch) share it.
struct AttentionGraphKey {
  bool backward = false;
  DType dtype = DType::kF32;
  std::int64_t batch = 0;
  std::int64_t seq_len = 0;
  std::int64_t n_head = 0;
  std::int64_t n_kv_head = 0;
  std::int64_t head_dim = 0;
  std::vector<std::int64_t> strides;  // each operand's batch, seq and head strides, in order

  friend bool operator==(const AttentionGraphKey&, const AttentionGraphKey&) = default;
  friend auto operator<=>(const AttentionGraphKey&, const AttentionGraphKey&) = default;
};

// The key of a call over `operands` (forward: q, k, v, o; backward: q, k, v, o, d_o, dq, dk,
// dv), all of q's dtype.
inline AttentionGraphKey attention_graph_key(
    const AttentionShape& shape, bool backward,
    std::initializer_list<const AttentionHeads*> operands) {
  AttentionGraphKey key{backward,       (*operands.begin())->base.dtype(),
                        shape.batch,    shape.seq_len,
                        shape.n_head,   shape.n_kv_head,
                        shape.head_dim, {}};
  key.strides.reserve(3 * operands.size());
  for (const AttentionHeads* heads : operands) {
    key.strides.insert(key.strides.end(),
                       {heads->strides.batch, heads->strides.seq, heads->strides.head});
  }
  return key;
}

}  // namespace zt::nn
