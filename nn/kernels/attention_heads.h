// AttentionHeads: the operand type of the attention ops, a strided (B, T, heads, head_dim)
// view into a contiguous Tensor, so that q, k and v are read where the fused projection
// wrote them; and AttentionShape, the geometry of one call, checked once. Host code only
// (it checks with ZT_CHECK).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/tensor.h"
#include "nn/kernels/math/attention_math.h"
#include "nn/kernels/math/dropout_math.h"

namespace zt::nn {

// Note [Attention operands]
// Tensors are contiguous views (docs/ARCHITECTURE.md, Decisions), but attention reads its
// heads out of wider rows: q, k and v are column blocks of the qkv projection's (B, T, W)
// output. Rather than give every Tensor strides, the attention ops take AttentionHeads:
// the base Tensor that holds the values, and where element (b, t, h, d) sits in it,
//   base[offset + b batch_stride + t seq_stride + h head_stride + d],
// with the head_dim elements of one head always contiguous (so a head is a (T, head_dim)
// matrix with row stride seq_stride, which a GEMM reads in place). All operands of one call
// share a dtype; the outputs' heads must not overlap each other or the inputs.
// Grouped-query attention: k and v may have fewer heads than q (n_kv_head dividing n_head);
// query head h reads kv head h / (n_head / n_kv_head), as PyTorch's repeat_interleave does.
struct AttentionHeads {
  Tensor base;
  math::HeadStrides strides{};  // elements
  std::int64_t batch = 0;
  std::int64_t seq_len = 0;
  std::int64_t n_heads = 0;
  std::int64_t head_dim = 0;

  // The element of base where head h of position t of batch row b starts.
  std::int64_t row_start(std::int64_t b, std::int64_t t, std::int64_t h) const {
    return math::head_row_start(strides, b, t, h);
  }

  // Columns [first_column, first_column + n_heads head_dim) of every row of a (B, T, W)
  // tensor, as n_heads heads side by side.
  static AttentionHeads columns(const Tensor& x, std::int64_t first_column, std::int64_t n_heads,
                                std::int64_t head_dim) {
    ZT_CHECK(x.rank() == 3,
             "attention heads of a tensor that is not (B, T, W): " + x.shape().to_string());
    ZT_CHECK(n_heads > 0 && head_dim > 0 && first_column >= 0 &&
                 first_column + n_heads * head_dim <= x.dim(2),
             "attention heads outside the rows of " + x.shape().to_string());
    const std::int64_t width = x.dim(2);
    return {x,       {first_column, x.dim(1) * width, width, head_dim}, x.dim(0), x.dim(1), n_heads,
            head_dim};
  }
  // Positions [begin, begin + count) of these heads (a KV cache's filled part, or the last
  // queries of a longer sequence), in the same base.
  AttentionHeads positions(std::int64_t begin, std::int64_t count) const {
    ZT_CHECK(begin >= 0 && count >= 0 && begin + count <= seq_len,
             "attention heads: positions [" + std::to_string(begin) + ", " +
                 std::to_string(begin + count) + ") outside " + std::to_string(seq_len));
    AttentionHeads view = *this;
    view.strides.offset += begin * strides.seq;
    view.seq_len = count;
    return view;
  }
  // Every column of a (B, T, n_heads head_dim) tensor: an attention output or its gradient.
  static AttentionHeads packed(const Tensor& x, std::int64_t n_heads) {
    ZT_CHECK(x.rank() == 3 && n_heads > 0 && x.dim(2) % n_heads == 0,
             "attention heads: " + x.shape().to_string() + " is not (B, T, n_heads head_dim)");
    return columns(x, 0, n_heads, x.dim(2) / n_heads);
  }
};

// q, k and v of a fused projection (B, T, (n_head + 2 n_kv_head) head_dim): q's columns
// first, then k's, then v's, each heads side by side.
struct QkvHeads {
  AttentionHeads q;
  AttentionHeads k;
  AttentionHeads v;
};
inline QkvHeads split_qkv(const Tensor& qkv, std::int64_t n_head, std::int64_t n_kv_head) {
  ZT_CHECK(
      qkv.rank() == 3 && n_head > 0 && n_kv_head > 0 && qkv.dim(2) % (n_head + 2 * n_kv_head) == 0,
      "attention qkv " + qkv.shape().to_string() + " is not (B, T, (" + std::to_string(n_head) +
          " + 2 x " + std::to_string(n_kv_head) + ") head_dim)");
  const std::int64_t head_dim = qkv.dim(2) / (n_head + 2 * n_kv_head);
  return {AttentionHeads::columns(qkv, 0, n_head, head_dim),
          AttentionHeads::columns(qkv, n_head * head_dim, n_kv_head, head_dim),
          AttentionHeads::columns(qkv, (n_head + n_kv_head) * head_dim, n_kv_head, head_dim)};
}

// The geometry of one attention call. Note [Longer key sequence]: k and v may hold more
// positions than q (kv_len >= seq_len), as when decoding with a KV cache: the queries are
// the last seq_len positions, query t sits at position query_offset() + t and sees keys
// 0..query_offset() + t. kv_len == seq_len is training's square causal attention.
struct AttentionShape {
  std::int64_t batch;
  std::int64_t seq_len;    // query positions
  std::int64_t n_head;     // query heads
  std::int64_t n_kv_head;  // key/value heads, dividing n_head
  std::int64_t head_dim;
  std::int64_t kv_len;  // key/value positions, >= seq_len
  // query heads per kv head; query head h reads kv head h / group()
  std::int64_t group() const { return n_head / n_kv_head; }
  // the position of query 0 among the keys
  std::int64_t query_offset() const { return kv_len - seq_len; }
  float scale() const { return 1.0f / std::sqrt(static_cast<float>(head_dim)); }
  // lse's shape: one fp32 per (batch row, query head, query position)
  Shape lse_shape() const { return Shape{batch, n_head, seq_len}; }
};

// Checks that `heads` has the call's batch and head_dim, `seq_len` positions, `n_heads`
// heads and every element inside its base.
inline void check_attention_heads(const AttentionHeads& heads, const AttentionShape& shape,
                                  std::int64_t seq_len, std::int64_t n_heads, const char* name) {
  const std::string what = std::string("attention operand ") + name;
  ZT_CHECK(heads.base.defined(), what + " has no tensor");
  ZT_CHECK(heads.batch == shape.batch && heads.seq_len == seq_len && heads.n_heads == n_heads &&
               heads.head_dim == shape.head_dim,
           what + " does not match q's (B, T, heads, head_dim)");
  const math::HeadStrides& s = heads.strides;
  ZT_CHECK(s.offset >= 0 && s.batch >= 0 && s.seq >= 0 && s.head >= 0, what + ": negative stride");
  const std::int64_t last = heads.row_start(shape.batch - 1, seq_len - 1, n_heads - 1);
  ZT_CHECK(
      shape.batch == 0 || seq_len == 0 || last + shape.head_dim <= heads.base.numel(),
      what + " reaches past its tensor of " + std::to_string(heads.base.numel()) + " elements");
}

// The shape of attention over q, k, v with output o and log-sum-exp lse, after checking that
// they agree (see Note [Attention operands]); k and v may be longer than q (Note [Longer key
// sequence]).
inline AttentionShape attention_shape_of(const AttentionHeads& q, const AttentionHeads& k,
                                         const AttentionHeads& v, const AttentionHeads& o,
                                         const Tensor& lse) {
  const AttentionShape shape{q.batch, q.seq_len, q.n_heads, k.n_heads, q.head_dim, k.seq_len};
  ZT_CHECK(shape.n_head > 0 && shape.n_kv_head > 0 && shape.n_head % shape.n_kv_head == 0,
           "attention: " + std::to_string(shape.n_kv_head) + " kv heads do not divide " +
               std::to_string(shape.n_head) + " query heads");
  ZT_CHECK(shape.kv_len >= shape.seq_len,
           "attention: k and v have " + std::to_string(shape.kv_len) +
               " positions, fewer than q's " + std::to_string(shape.seq_len));
  check_attention_heads(q, shape, shape.seq_len, shape.n_head, "q");
  check_attention_heads(k, shape, shape.kv_len, shape.n_kv_head, "k");
  check_attention_heads(v, shape, shape.kv_len, shape.n_kv_head, "v");
  check_attention_heads(o, shape, shape.seq_len, shape.n_head, "o");
  const DType dtype = q.base.dtype();
  ZT_CHECK(is_floating(dtype) && k.base.dtype() == dtype && v.base.dtype() == dtype &&
               o.base.dtype() == dtype,
           "attention operands of different or non-floating dtypes");
  ZT_CHECK(lse.defined() && lse.dtype() == DType::kF32 && lse.shape() == shape.lse_shape(),
           "attention lse must be f32 " + shape.lse_shape().to_string());
  return shape;
}

// Checks the backward's extra operands against the forward's shape. The backward is
// training's: k and v as long as q (a KV cache is for decoding, which has no backward).
inline void check_attention_gradients(const AttentionShape& shape, const AttentionHeads& d_o,
                                      const AttentionHeads& dq, const AttentionHeads& dk,
                                      const AttentionHeads& dv) {
  ZT_CHECK(shape.kv_len == shape.seq_len, "attention backward needs k and v as long as q (" +
                                              std::to_string(shape.kv_len) + " key positions, " +
                                              std::to_string(shape.seq_len) +
                                              " queries): a KV cache's attention has no backward");
  check_attention_heads(d_o, shape, shape.seq_len, shape.n_head, "d_o");
  check_attention_heads(dq, shape, shape.seq_len, shape.n_head, "dq");
  check_attention_heads(dk, shape, shape.kv_len, shape.n_kv_head, "dk");
  check_attention_heads(dv, shape, shape.kv_len, shape.n_kv_head, "dv");
  const DType dtype = d_o.base.dtype();
  ZT_CHECK(dq.base.dtype() == dtype && dk.base.dtype() == dtype && dv.base.dtype() == dtype,
           "attention gradients of different dtypes");
}

// Checks that dropout on the probabilities (`dropout`, null: none) comes with training's
// attention, keys as many as queries (Note [Attention dropout] in attention_dropout_math.h).
inline void check_attention_dropout(const AttentionShape& shape, const math::DropoutMask* dropout) {
  ZT_CHECK(dropout == nullptr || shape.kv_len == shape.seq_len,
           "attention dropout needs k and v as long as q (" + std::to_string(shape.kv_len) +
               " key positions, " + std::to_string(shape.seq_len) +
               " queries): decoding runs without dropout");
}

}  // namespace zt::nn
