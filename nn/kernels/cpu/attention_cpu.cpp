// CPU causal attention. Head h of an operand is a (T, hs) matrix with row stride seq_stride
// (Note [Attention operands]), which the GEMMs read in place. Both directions are tiled (Note
// [Tiled attention]): the forward per (batch row, query head, query block) an online softmax
// over key blocks, one (block_q, block_k) f32 score block per chunk of units; the backward per
// (batch row, kv head) over its group's query blocks and their key blocks, one P and one dS
// block per chunk (Note [Attention chunks]). The row arithmetic is attention_math.h's, as on
// CUDA, in the vector loops of attention_rows_cpu.cpp:
//   forward:  per key block: S = scale q_blk k_blk^T;  m, l, P = attention_forward_rows(S);
//             o_blk = o_blk exp(m - m') + P v_blk;  at the end o /= l, lse = m + log l
//             (k and v may be longer than q, T_kv >= T: Note [Longer key sequence])
//   backward: D_t = dO_t · O_t;  per query block and key block: P = exp(scale q_blk k_blk^T
//             - lse);  dv_blk += P^T dO_blk;  dP = dO_blk v_blk^T;  dS_t = P_t ∘ (dP_t - D_t);
//             dq_blk += scale dS k_blk;  dk_blk += scale dS^T q_blk
// where k, v are kv head h / group. The backward visits the query heads of one kv head in
// turn, so dk and dv sum over the group in f32 before they are rounded. bf16 operands go to
// oneDNN's bf16 GEMM as they are where it runs on AMX (Note [bf16 attention on bf16 GEMMs]);
// elsewhere, and for f16, they are widened to f32 workspace (packed (B, T, heads, hs)) and
// results rounded once.
// With dropout on the probabilities (Note [Attention dropout] in attention_dropout_math.h) the
// forward drops each P block after its row statistics took it in, before P v_blk; the backward
// turns dP into dS with the mask and P into P ∘ Z before dv takes it.
#include "nn/kernels/cpu/attention_cpu.h"

#include <algorithm>
#include <array>

#include "core/error.h"
#include "core/parallel_for.h"
#include "nn/kernels/cpu/attention_dropout_cpu.h"
#include "nn/kernels/cpu/attention_rows_cpu.h"
#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "nn/kernels/math/attention_math.h"

namespace zt::nn::cpu {
namespace {

// Note [Attention chunks]
// The units (the forward's query blocks, the backward's (batch row, kv head) pairs) run in
// parallel, a chunk of them per thread, each chunk with its own workspace (the forward's score
// block, the backward's P and dS blocks). The chunks are cut from the number of units alone,
// into at most kMaxAttentionChunks (Note [Chunks fixed by size]): the workspace is then at most
// that many blocks on any machine, and the estimator counts what every machine uses. A
// backward unit writes its kv head's dk and dv and the dq of the query heads that read it, and
// nothing else, so the query heads that sum into one kv head's dk and dv stay on one thread,
// in order. GEMMs inside a chunk run on one thread (gemm_cpu.cpp): the units are the
// parallelism.
constexpr std::int64_t kMaxAttentionChunks = 8;

// The grain over `pairs` units: at most kMaxAttentionChunks chunks.
std::int64_t attention_grain(std::int64_t pairs) {
  return std::max<std::int64_t>(1, (pairs + kMaxAttentionChunks - 1) / kMaxAttentionChunks);
}

std::int64_t attention_chunks(std::int64_t pairs) {
  return std::max<std::int64_t>(1, parallel_chunk_count(pairs, attention_grain(pairs)));
}

// The f32 heads a kernel computes with: the operand itself when it is f32, else a packed
// (B, T, heads, hs) f32 copy in tracked workspace (loaded when `load`), which store() rounds
// back into the operand's strided rows.
class F32Heads {
 public:
  F32Heads(const AttentionHeads& heads, bool load, MemoryTracker& tracker) : heads_(heads) {
    if (heads.base.dtype() == DType::kF32) {
      f32_ = heads;
      return;
    }
    // not zeroed: a loaded copy is written whole, and every output head is written whole
    // before it is read (o and dq by their first key block, dk and dv by the first query block
    // the backward visits)
    const Tensor packed =
        Tensor::empty(Shape{heads.batch, heads.seq_len, heads.n_heads * heads.head_dim},
                      DType::kF32, tracker, MemoryCategory::kWorkspace);
    f32_ = AttentionHeads::packed(packed, heads.n_heads);
    if (!load || heads.base.device().meta) return;  // Note [Dry kernels]
    for_each_row([&](std::int64_t from, std::int64_t to) {
      load_f32(heads_.base, from, heads_.head_dim, f32_.base.data_as<float>() + to);
    });
  }

  // Head h of batch row b: (T, hs) with row stride ld().
  float* head(std::int64_t b, std::int64_t h) const {
    return f32_.base.data_as<float>() + f32_.row_start(b, 0, h);
  }
  std::int64_t ld() const { return f32_.strides.seq; }

  void store() const {
    if (heads_.base.dtype() == DType::kF32 || heads_.base.device().meta) return;
    for_each_row([&](std::int64_t to, std::int64_t from) {
      store_from_f32(f32_.base.data_as<float>() + from, heads_.base, to, heads_.head_dim);
    });
  }

 private:
  // fn(start in the operand, start in the f32 copy) for every row of head_dim elements,
  // positions (b, t) in parallel.
  template <typename Fn>
  void for_each_row(Fn fn) const {
    const std::int64_t positions = heads_.batch * heads_.seq_len;
    parallel_for(positions, parallel_row_grain(heads_.n_heads * heads_.head_dim),
                 [&](std::int64_t first, std::int64_t last) {
                   for (std::int64_t bt = first; bt < last; ++bt) {
                     const std::int64_t b = bt / heads_.seq_len, t = bt % heads_.seq_len;
                     for (std::int64_t h = 0; h < heads_.n_heads; ++h) {
                       fn(heads_.row_start(b, t, h), f32_.row_start(b, t, h));
                     }
                   }
                 });
  }

  AttentionHeads heads_;
  AttentionHeads f32_;  // heads_ itself, or the packed workspace copy
};

// Note [Tiled attention]
// Neither direction holds a (T, T_kv) matrix. The forward runs, per (batch row, query head,
// query block), an online softmax over key blocks (flash attention's recurrence). Per query
// row it keeps the running max m and sum l (OnlineSoftmax) and accumulates Σ_j exp(S_tj - m) v_j
// in the output rows themselves (f32: the operand or its widened copy), rescaled by
// exp(m - m') whenever a block raises the max; at the end o = acc / l and lse = m + log l.
// Keys after the block's last query position are never computed (the key block holding it is
// cut there, as in the backward), the rest of that block is masked row by row. The block sizes
// are PyTorch's CPU flash kernel's: query blocks of 32 below length 192, 64 below 768 and 256
// from there, key blocks of 512, each capped at its length (at T = 128, query blocks of 64
// were no faster and of 128 slower: fewer GEMM calls, more of each diagonal tile masked).
// Units are cut into at most kMaxAttentionChunks chunks (Note [Attention chunks]), each with
// one (block_q, block_k) f32 score block of workspace, its rows block_k rounded up to
// kAttentionRowLanes for the row loops of attention_rows_cpu.cpp. The online softmax sums in
// another order than the untiled rows did, so o and lse differ from them by round-off, not by
// more.
// The backward (flash attention's, in one pass) needs no running statistics: lse gives every
// block its final P = exp(S - lse) at once, and D_t = dO_t · O_t stands in for the row's
// Σ_j P_tj dP_tj. A unit is one (batch row, kv head): for each query head of the group in
// order, each query block from the last to the first, each key block the block sees (the
// diagonal one cut at the block's last position) it adds that tile's P^T dO into dv, scale dS
// k into dq (the first key block writes it) and scale dS^T q into dk, with one (block_q,
// block_k) P and one dS block per chunk as workspace. The last query block sees every key, so
// the first head's visit to it writes dk and dv whole (beta 0) and nothing needs zeroing
// first: zeroing them row by row (head_dim elements at a time, cold) was 0.65% of the 20M
// step. Every sum runs in an order fixed by the shape, so the gradients are the same bits on
// any thread count; they differ from the untiled kernel's (which summed each gradient over all
// keys or queries in one GEMM) by round-off. A unit does the five GEMMs of the untiled kernel
// on the tiles a causal mask leaves, about half the work at long lengths, and recomputes
// nothing; its parallelism is B n_kv_head units.
constexpr std::int64_t kKeyBlock = 512;

std::int64_t query_block(std::int64_t seq_len) {
  const std::int64_t block = seq_len < 192 ? 32 : seq_len < 768 ? 64 : 256;
  return std::min(block, seq_len);
}
std::int64_t key_block(std::int64_t kv_len) { return std::min(kKeyBlock, kv_len); }
// The row stride of a score, P or dS block: key_block rounded up for the row loops.
std::int64_t score_row_stride(std::int64_t kv_len) {
  return attention_row_stride(key_block(kv_len));
}

// The query blocks of one (batch row, query head): the forward's units are these times
// B nh.
std::int64_t query_blocks(const AttentionShape& shape) {
  const std::int64_t block = query_block(shape.seq_len);
  return (shape.seq_len + block - 1) / block;
}

// Dropout on the probabilities as the tiles run it: forward's mask (null: none) and the vector
// instruction set of its loops.
struct ProbsDropout {
  const math::DropoutMask* mask;
  VectorIsa isa;
};

// The largest query block (256) bounds the per-row statistics kept on the stack.
constexpr std::int64_t kMaxQueryBlock = 256;

struct ForwardOperands {
  const F32Heads& q;
  const F32Heads& k;
  const F32Heads& v;
  const F32Heads& o;
  float* lse;            // (B, nh, T)
  float* scores;         // (chunks, block_q, block_k) workspace: one score block per chunk
  ProbsDropout dropout;  // on the probabilities
};

// Query rows [t0, t0 + rows) of query head h of batch row b (Note [Tiled attention]), with
// score block `s` (rows, block_k).
void forward_query_block(const AttentionShape& shape, const ForwardOperands& x, std::int64_t b,
                         std::int64_t h, std::int64_t t0, std::int64_t rows, float* s) {
  const std::int64_t hs = shape.head_dim, kv_len = shape.kv_len;
  const std::int64_t kv = h / shape.group(), block_k = key_block(kv_len);
  const std::int64_t ld_s = score_row_stride(kv_len);
  const std::int64_t first_position = shape.query_offset() + t0;  // of row 0 among the keys
  const float* q = x.q.head(b, h) + t0 * x.q.ld();
  const float* k = x.k.head(b, kv);
  const float* v = x.v.head(b, kv);
  float* o = x.o.head(b, h) + t0 * x.o.ld();
  const std::int64_t ld_o = x.o.ld();
  std::array<math::OnlineSoftmax, kMaxQueryBlock> state;
  for (std::int64_t i = 0; i < rows; ++i) {
    state[static_cast<std::size_t>(i)] = math::online_softmax_empty();
  }
  // keys after the last row's position are masked for every row: their blocks never run
  const std::int64_t keys_seen = first_position + rows;
  for (std::int64_t j0 = 0; j0 < keys_seen; j0 += block_k) {
    const std::int64_t n = std::min(block_k, keys_seen - j0);
    // S (rows, n) = scale q_blk (rows, hs) · k_blk^T (hs, n)
    gemm_f32(false, true, rows, n, hs, shape.scale(), q, x.q.ld(), k + j0 * x.k.ld(), x.k.ld(),
             0.0f, s, ld_s);
    // row i's query sits at key position first_position + i and sees keys up to it
    const ScoreBlock p{s, ld_s, rows, n, first_position - j0 + 1};
    attention_forward_rows(p, state.data(), o, ld_o, hs);
    // P -> P ∘ Z after the row statistics took the undropped P in
    if (x.dropout.mask != nullptr) {
      attention_dropout_rows(math::attention_dropout_head(*x.dropout.mask, b, h, shape.seq_len), t0,
                             j0, p, x.dropout.isa);
    }
    // acc (rows, hs) += P_blk (rows, n) · v_blk (n, hs); the first key block writes acc (every
    // row sees key 0, and the rows above left o alone until then: beta 0 ignores what it held)
    gemm_f32(false, false, rows, hs, n, 1.0f, s, ld_s, v + j0 * x.v.ld(), x.v.ld(),
             j0 == 0 ? 0.0f : 1.0f, o, ld_o);
  }
  attention_forward_finish(state.data(), rows, o, ld_o, hs,
                           x.lse + (b * shape.n_head + h) * shape.seq_len + t0);
}

std::int64_t forward_units(const AttentionShape& shape) {
  return shape.batch * shape.n_head * query_blocks(shape);
}

void forward_heads(const AttentionShape& shape, const ForwardOperands& x) {
  const std::int64_t units = forward_units(shape), blocks = query_blocks(shape);
  const std::int64_t block_q = query_block(shape.seq_len);
  const std::int64_t score_block = block_q * score_row_stride(shape.kv_len);
  parallel_for_chunks(units, attention_grain(units),
                      [&](std::int64_t chunk, std::int64_t first, std::int64_t last) {
                        for (std::int64_t unit = first; unit < last; ++unit) {
                          const std::int64_t pair = unit / blocks, block = unit % blocks;
                          const std::int64_t t0 = block * block_q;
                          forward_query_block(shape, x, pair / shape.n_head, pair % shape.n_head,
                                              t0, std::min(block_q, shape.seq_len - t0),
                                              x.scores + chunk * score_block);
                        }
                      });
}

struct BackwardOperands {
  const F32Heads& q;
  const F32Heads& k;
  const F32Heads& v;
  const F32Heads& o;
  const float* lse;  // (B, nh, T)
  const F32Heads& d_o;
  const F32Heads& dq;
  const F32Heads& dk;
  const F32Heads& dv;
  float* p;              // (chunks, block_q, block_k) workspace: one P block per chunk
  float* ds;             // (chunks, block_q, block_k) workspace: one dP, then dS, block per chunk
  ProbsDropout dropout;  // forward's, on the probabilities
};

// The beta of a backward query block's dk and dv tiles: 0 when the block writes them, which
// only a block that sees every key may (Note [Tiled attention]), else 1.
float kv_tile_beta(const AttentionShape& shape, std::int64_t keys_seen, bool writes_kv) {
  ZT_CHECK(!writes_kv || keys_seen == shape.kv_len,
           "attention backward: a query block that does not see every key cannot write dk, dv");
  return writes_kv ? 0.0f : 1.0f;
}

// The backward's dS over the block p of query head h of batch row b (queries t0 on, keys j0
// on), in place over dp (which holds dP, p's shape and row stride): P ∘ (dP - D), or with
// dropout P ∘ (Z dPd - D), which also turns p into P ∘ Z (Note [Attention dropout]).
void score_gradient_rows(const AttentionShape& shape, const ProbsDropout& dropout, std::int64_t b,
                         std::int64_t h, std::int64_t t0, std::int64_t j0, const ScoreBlock& p,
                         float* dp, const float* d) {
  if (dropout.mask == nullptr) {
    attention_score_gradient_rows(p.data, dp, p.ld, p.rows, p.n, d);
    return;
  }
  attention_dropout_score_gradient_rows(
      math::attention_dropout_head(*dropout.mask, b, h, shape.seq_len), t0, j0, p, dp, d,
      dropout.isa);
}

// Query rows [t0, t0 + rows) of query head h (of kv head kv) of batch row b (Note [Tiled
// attention], the backward): adds their share into dq's rows and into dk and dv, over every key
// block they see, with the chunk's P and dS blocks `p` and `ds` (rows, block_k). With
// `writes_kv` (the block sees every key) its tiles write dk and dv instead of adding.
void backward_query_block(const AttentionShape& shape, const BackwardOperands& x, std::int64_t b,
                          std::int64_t h, std::int64_t kv, std::int64_t t0, std::int64_t rows,
                          bool writes_kv, float* p, float* ds) {
  const std::int64_t hs = shape.head_dim, block_k = key_block(shape.kv_len);
  const std::int64_t ld_p = score_row_stride(shape.kv_len);       // of p and ds
  const std::int64_t first_position = shape.query_offset() + t0;  // of row 0 among the keys
  const float* q = x.q.head(b, h) + t0 * x.q.ld();
  const float* d_o = x.d_o.head(b, h) + t0 * x.d_o.ld();
  const float* o = x.o.head(b, h) + t0 * x.o.ld();
  const float* k = x.k.head(b, kv);
  const float* v = x.v.head(b, kv);
  float* dq = x.dq.head(b, h) + t0 * x.dq.ld();
  float* dk = x.dk.head(b, kv);
  float* dv = x.dv.head(b, kv);
  const float* lse = x.lse + (b * shape.n_head + h) * shape.seq_len + t0;
  // D_t = dO_t · O_t, which stands in for Σ_j P_tj dP_tj over all of row t's keys
  std::array<float, kMaxQueryBlock> d;
  attention_output_dots(o, x.o.ld(), d_o, x.d_o.ld(), rows, hs, d.data());
  // keys after the last row's position are masked for every row: no block, or part of one,
  // past them runs
  const std::int64_t keys_seen = first_position + rows;
  const float kv_beta = kv_tile_beta(shape, keys_seen, writes_kv);
  for (std::int64_t j0 = 0; j0 < keys_seen; j0 += block_k) {
    const std::int64_t n = std::min(block_k, keys_seen - j0);
    const float* k_blk = k + j0 * x.k.ld();
    const float* v_blk = v + j0 * x.v.ld();
    // P (rows, n) = exp(scale q_blk k_blk^T - lse), masked
    gemm_f32(false, true, rows, n, hs, shape.scale(), q, x.q.ld(), k_blk, x.k.ld(), 0.0f, p, ld_p);
    const ScoreBlock p_blk{p, ld_p, rows, n, first_position - j0 + 1};
    attention_probability_rows(p_blk, lse);
    // dP (rows, n) = dO_blk · v_blk^T;  dS = P ∘ (dP - D) (with dropout: P ∘ (Z dPd - D), and
    // P becomes P ∘ Z for dv)
    gemm_f32(false, true, rows, n, hs, 1.0f, d_o, x.d_o.ld(), v_blk, x.v.ld(), 0.0f, ds, ld_p);
    score_gradient_rows(shape, x.dropout, b, h, t0, j0, p_blk, ds, d.data());
    // dv_blk (n, hs) += P^T (n, rows) · dO_blk (rows, hs)
    gemm_f32(true, false, n, hs, rows, 1.0f, p, ld_p, d_o, x.d_o.ld(), kv_beta, dv + j0 * x.dv.ld(),
             x.dv.ld());
    // dq_blk (rows, hs) += scale dS (rows, n) · k_blk (n, hs), written by the first key block
    // (every row sees key 0, so it covers all of dq's rows: nothing to zero first);
    // dk_blk (n, hs) += scale dS^T (n, rows) · q_blk (rows, hs)
    gemm_f32(false, false, rows, hs, n, shape.scale(), ds, ld_p, k_blk, x.k.ld(),
             j0 == 0 ? 0.0f : 1.0f, dq, x.dq.ld());
    gemm_f32(true, false, n, hs, rows, shape.scale(), ds, ld_p, q, x.q.ld(), kv_beta,
             dk + j0 * x.dk.ld(), x.dk.ld());
  }
}

// The gradients of kv head kv of batch row b and of its group's query heads, with the chunk's
// P and dS blocks: the group's query heads in order, each's query blocks from the last, the
// first visit writing dk and dv and every later one adding into them (and each writing its own
// dq) in f32.
void backward_kv_head(const AttentionShape& shape, const BackwardOperands& x, std::int64_t b,
                      std::int64_t kv, float* p, float* ds) {
  const std::int64_t block_q = query_block(shape.seq_len);
  const std::int64_t last_t0 = (query_blocks(shape) - 1) * block_q;
  for (std::int64_t g = 0; g < shape.group(); ++g) {
    const std::int64_t h = kv * shape.group() + g;
    for (std::int64_t t0 = last_t0; t0 >= 0; t0 -= block_q) {
      backward_query_block(shape, x, b, h, kv, t0, std::min(block_q, shape.seq_len - t0),
                           g == 0 && t0 == last_t0, p, ds);
    }
  }
}

// (chunks, block_q, block_k) f32: one block per chunk of (batch row, kv head) pairs (Note
// [Attention chunks]), the backward's P or dS.
Tensor backward_block_workspace(std::int64_t chunks, const AttentionShape& shape,
                                MemoryTracker& tracker) {
  return Tensor::zeros(Shape{chunks, query_block(shape.seq_len), score_row_stride(shape.kv_len)},
                       DType::kF32, tracker, MemoryCategory::kWorkspace);
}

// Note [bf16 attention on bf16 GEMMs]
// Widening bf16 heads to f32 copies and multiplying the tiles in f32 made attention a fifth of
// a bf16 GPT step (20M shape, 2-core Xeon with AMX: 51 ms of the step's heads against 40 ms
// for fp32): the copies cost conversions both ways, and f32 tiles miss the bf16 units.
// Where oneDNN's bf16 GEMM runs on AMX tiles, the tiles read q, k, v, o and dO in place as
// bf16 and accumulate in f32. Only there: on the same Xeon with oneDNN capped below AMX
// (DNNL_MAX_CPU_ISA) the 20M heads took 79 ms on AVX512_BF16 dot products and 181 ms on plain
// AVX-512, against the widened path's 50 ms; tiles this small gain on nothing but AMX.
// The two operands that come out of f32 arithmetic, P (forward and backward) and dS (after
// the attention scale is applied to it), enter their products as two bf16 tiles each, hi =
// bf16(x) and lo = bf16(x - hi) (x - hi is exact in f32), so they carry 16 significant bits
// (2^-17 relative) and the results keep the f32 products' error bounds. Rounding them once,
// as FlashAttention, cuDNN's fused attention and PyTorch's CPU flash kernel do, was 1.4x
// faster still (25 against 34 ms) but failed those bounds: a forward output that is a
// cancelling sum came out 0.55% off where its own rounding allows 0.39%. Everything else stays
// f32 until it is stored: the row statistics (max, sum, lse, D), the scores, dS's own
// arithmetic (from the f32 P), and the accumulators, one set per chunk: o's and dq's rows of
// the query block in hand, and the unit's whole dk and dv (kv_len rows), rounded into their
// heads once, after the unit's last tile. The GEMMs keep alpha = 1 (Note [bf16 GEMMs take
// alpha = 1] in gemm_cpu.cpp: oneDNN's own alpha is 7x slower on these tiles, and applying it
// around the GEMM costs passes over C): the scale multiplies the f32 scores and dS instead.
// Elsewhere (no AMX, or kWidenedToF32) the f32 path above runs.

// One operand's heads read in place as bf16: head h of batch row b is a (T, hs) matrix of row
// stride ld().
struct Bf16HeadRows {
  const AttentionHeads& heads;
  BF16* head(std::int64_t b, std::int64_t h) const {
    return heads.base.data_as<BF16>() + heads.row_start(b, 0, h);
  }
  std::int64_t ld() const { return heads.strides.seq; }
};

// Multiplies `rows` rows of `cols` f32 elements (row stride ld) by factor: the attention
// scale, kept off the bf16 GEMM's alpha (Note [bf16 attention on bf16 GEMMs]).
void scale_rows(float* x, std::int64_t ld, std::int64_t rows, std::int64_t cols, float factor) {
  for (std::int64_t i = 0; i < rows; ++i) {
    float* row = x + i * ld;
    for (std::int64_t j = 0; j < cols; ++j) row[j] *= factor;
  }
}

// Rounds `rows` rows of `cols` f32 elements (row stride ld_from) into bf16 rows (ld_to).
void round_rows(const float* from, std::int64_t ld_from, BF16* to, std::int64_t ld_to,
                std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i = 0; i < rows; ++i) round_into(from + i * ld_from, to + i * ld_to, cols);
}

// A tile of f32 as two bf16 tiles, x = hi + lo to 16 significant bits (Note [bf16 attention on
// bf16 GEMMs]): hi = bf16(x), lo = bf16(x - hi), where x - hi is exact in f32. Rows of at most
// kKeyBlock elements (P's and dS's).
struct SplitTile {
  BF16* hi;
  BF16* lo;
};
void split_rows(const float* from, std::int64_t ld_from, const SplitTile& to, std::int64_t ld_to,
                std::int64_t rows, std::int64_t cols) {
  ZT_CHECK(cols <= kKeyBlock, "attention: a tile row longer than a key block");
  std::array<float, kKeyBlock> rest;
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* x = from + i * ld_from;
    BF16* hi = to.hi + i * ld_to;
    round_into(x, hi, cols);
    widen_into(hi, rest.data(), cols);
    for (std::int64_t j = 0; j < cols; ++j) {
      rest[static_cast<std::size_t>(j)] = x[j] - rest[static_cast<std::size_t>(j)];
    }
    round_into(rest.data(), to.lo + i * ld_to, cols);
  }
}

struct Bf16ForwardOperands {
  Bf16HeadRows q, k, v, o;
  float* lse;            // (B, nh, T)
  ProbsDropout dropout;  // on the probabilities
};

// One chunk's forward workspace: the f32 score block, P as two bf16 tiles, and the query
// block's f32 output accumulator (block_q, hs).
struct Bf16ForwardTiles {
  float* scores;
  SplitTile p;
  float* acc;
};

// Query rows [t0, t0 + rows) of query head h of batch row b on bf16 products (Note [bf16
// attention on bf16 GEMMs]); the recurrence is forward_query_block's.
void forward_query_block_bf16(const AttentionShape& shape, const Bf16ForwardOperands& x,
                              std::int64_t b, std::int64_t h, std::int64_t t0, std::int64_t rows,
                              const Bf16ForwardTiles& tiles) {
  const std::int64_t hs = shape.head_dim, kv = h / shape.group();
  const std::int64_t block_k = key_block(shape.kv_len), ld_s = score_row_stride(shape.kv_len);
  const std::int64_t first_position = shape.query_offset() + t0;
  const BF16* q = x.q.head(b, h) + t0 * x.q.ld();
  const BF16* k = x.k.head(b, kv);
  const BF16* v = x.v.head(b, kv);
  std::array<math::OnlineSoftmax, kMaxQueryBlock> state;
  for (std::int64_t i = 0; i < rows; ++i) {
    state[static_cast<std::size_t>(i)] = math::online_softmax_empty();
  }
  const std::int64_t keys_seen = first_position + rows;
  for (std::int64_t j0 = 0; j0 < keys_seen; j0 += block_k) {
    const std::int64_t n = std::min(block_k, keys_seen - j0);
    gemm_bf16(false, true, rows, n, hs, 1.0f, q, x.q.ld(), k + j0 * x.k.ld(), x.k.ld(), 0.0f,
              tiles.scores, ld_s);
    scale_rows(tiles.scores, ld_s, rows, n, shape.scale());
    const ScoreBlock p{tiles.scores, ld_s, rows, n, first_position - j0 + 1};
    attention_forward_rows(p, state.data(), tiles.acc, hs, hs);
    if (x.dropout.mask != nullptr) {
      attention_dropout_rows(math::attention_dropout_head(*x.dropout.mask, b, h, shape.seq_len), t0,
                             j0, p, x.dropout.isa);
    }
    split_rows(tiles.scores, ld_s, tiles.p, ld_s, rows, n);
    gemm_bf16(false, false, rows, hs, n, 1.0f, tiles.p.hi, ld_s, v + j0 * x.v.ld(), x.v.ld(),
              j0 == 0 ? 0.0f : 1.0f, tiles.acc, hs);
    gemm_bf16(false, false, rows, hs, n, 1.0f, tiles.p.lo, ld_s, v + j0 * x.v.ld(), x.v.ld(), 1.0f,
              tiles.acc, hs);
  }
  attention_forward_finish(state.data(), rows, tiles.acc, hs, hs,
                           x.lse + (b * shape.n_head + h) * shape.seq_len + t0);
  round_rows(tiles.acc, hs, x.o.head(b, h) + t0 * x.o.ld(), x.o.ld(), rows, hs);
}

void forward_bf16(const AttentionHeads& q, const AttentionHeads& k, const AttentionHeads& v,
                  const AttentionHeads& o, const Tensor& lse, const AttentionShape& shape,
                  const ProbsDropout& dropout, MemoryTracker& tracker) {
  const std::int64_t units = forward_units(shape), blocks = query_blocks(shape);
  const std::int64_t block_q = query_block(shape.seq_len), ld_s = score_row_stride(shape.kv_len);
  const std::int64_t chunks = attention_chunks(units);
  // not zeroed: every tile is written by its GEMM or its rounding before it is read
  const Tensor scores =
      Tensor::empty(Shape{chunks, block_q, ld_s}, DType::kF32, tracker, MemoryCategory::kWorkspace);
  const Tensor p = Tensor::empty(Shape{chunks, 2, block_q, ld_s}, DType::kBF16, tracker,
                                 MemoryCategory::kWorkspace);
  const Tensor acc = Tensor::empty(Shape{chunks, block_q, shape.head_dim}, DType::kF32, tracker,
                                   MemoryCategory::kWorkspace);
  if (lse.device().meta) return;  // Note [Dry kernels] in cpu_kernel_backend.cpp
  const Bf16ForwardOperands x{{q}, {k}, {v}, {o}, lse.data_as<float>(), dropout};
  parallel_for_chunks(
      units, attention_grain(units),
      [&](std::int64_t chunk, std::int64_t first, std::int64_t last) {
        BF16* p_hi = p.data_as<BF16>() + chunk * 2 * block_q * ld_s;
        const Bf16ForwardTiles tiles{scores.data_as<float>() + chunk * block_q * ld_s,
                                     {p_hi, p_hi + block_q * ld_s},
                                     acc.data_as<float>() + chunk * block_q * shape.head_dim};
        for (std::int64_t unit = first; unit < last; ++unit) {
          const std::int64_t pair = unit / blocks, t0 = unit % blocks * block_q;
          forward_query_block_bf16(shape, x, pair / shape.n_head, pair % shape.n_head, t0,
                                   std::min(block_q, shape.seq_len - t0), tiles);
        }
      });
}

struct Bf16BackwardOperands {
  Bf16HeadRows q, k, v, o;
  const float* lse;  // (B, nh, T)
  Bf16HeadRows d_o, dq, dk, dv;
  ProbsDropout dropout;  // forward's, on the probabilities
};

// One chunk's backward workspace: P and dS in f32 and as two bf16 tiles (block_q, ld), the
// query block's rows of o and dO widened for D, its dq accumulator (block_q, hs), and the
// unit's dk and dv accumulators (kv_len, hs).
struct Bf16BackwardTiles {
  float* p;
  float* ds;
  SplitTile p16;
  SplitTile ds16;
  float* o_rows;
  float* d_o_rows;
  float* dq;
  float* dk;
  float* dv;
};

// backward_query_block on bf16 products: adds the query block's share into the unit's dk and
// dv accumulators (writes them when writes_kv) and rounds its dq rows into dq.
void backward_query_block_bf16(const AttentionShape& shape, const Bf16BackwardOperands& x,
                               std::int64_t b, std::int64_t h, std::int64_t kv, std::int64_t t0,
                               std::int64_t rows, bool writes_kv, const Bf16BackwardTiles& tiles) {
  const std::int64_t hs = shape.head_dim, block_k = key_block(shape.kv_len);
  const std::int64_t ld_p = score_row_stride(shape.kv_len);
  const std::int64_t first_position = shape.query_offset() + t0;
  const BF16* q = x.q.head(b, h) + t0 * x.q.ld();
  const BF16* d_o = x.d_o.head(b, h) + t0 * x.d_o.ld();
  const BF16* o = x.o.head(b, h) + t0 * x.o.ld();
  const BF16* k = x.k.head(b, kv);
  const BF16* v = x.v.head(b, kv);
  const float* lse = x.lse + (b * shape.n_head + h) * shape.seq_len + t0;
  // D_t = dO_t · O_t from the stored (bf16) o, widened exactly, as the f32 path reads it
  for (std::int64_t i = 0; i < rows; ++i) {
    widen_into(o + i * x.o.ld(), tiles.o_rows + i * hs, hs);
    widen_into(d_o + i * x.d_o.ld(), tiles.d_o_rows + i * hs, hs);
  }
  std::array<float, kMaxQueryBlock> d;
  attention_output_dots(tiles.o_rows, hs, tiles.d_o_rows, hs, rows, hs, d.data());
  const std::int64_t keys_seen = first_position + rows;
  const float kv_beta = kv_tile_beta(shape, keys_seen, writes_kv);
  for (std::int64_t j0 = 0; j0 < keys_seen; j0 += block_k) {
    const std::int64_t n = std::min(block_k, keys_seen - j0);
    const BF16* k_blk = k + j0 * x.k.ld();
    const BF16* v_blk = v + j0 * x.v.ld();
    gemm_bf16(false, true, rows, n, hs, 1.0f, q, x.q.ld(), k_blk, x.k.ld(), 0.0f, tiles.p, ld_p);
    scale_rows(tiles.p, ld_p, rows, n, shape.scale());
    const ScoreBlock p_blk{tiles.p, ld_p, rows, n, first_position - j0 + 1};
    attention_probability_rows(p_blk, lse);
    gemm_bf16(false, true, rows, n, hs, 1.0f, d_o, x.d_o.ld(), v_blk, x.v.ld(), 0.0f, tiles.ds,
              ld_p);
    // with dropout P becomes P ∘ Z here, for dv
    score_gradient_rows(shape, x.dropout, b, h, t0, j0, p_blk, tiles.ds, d.data());
    split_rows(tiles.p, ld_p, tiles.p16, ld_p, rows, n);
    gemm_bf16(true, false, n, hs, rows, 1.0f, tiles.p16.hi, ld_p, d_o, x.d_o.ld(), kv_beta,
              tiles.dv + j0 * hs, hs);
    gemm_bf16(true, false, n, hs, rows, 1.0f, tiles.p16.lo, ld_p, d_o, x.d_o.ld(), 1.0f,
              tiles.dv + j0 * hs, hs);
    // dq and dk take scale dS: scaled before the rounding, so the GEMMs keep alpha 1
    scale_rows(tiles.ds, ld_p, rows, n, shape.scale());
    split_rows(tiles.ds, ld_p, tiles.ds16, ld_p, rows, n);
    gemm_bf16(false, false, rows, hs, n, 1.0f, tiles.ds16.hi, ld_p, k_blk, x.k.ld(),
              j0 == 0 ? 0.0f : 1.0f, tiles.dq, hs);
    gemm_bf16(false, false, rows, hs, n, 1.0f, tiles.ds16.lo, ld_p, k_blk, x.k.ld(), 1.0f, tiles.dq,
              hs);
    gemm_bf16(true, false, n, hs, rows, 1.0f, tiles.ds16.hi, ld_p, q, x.q.ld(), kv_beta,
              tiles.dk + j0 * hs, hs);
    gemm_bf16(true, false, n, hs, rows, 1.0f, tiles.ds16.lo, ld_p, q, x.q.ld(), 1.0f,
              tiles.dk + j0 * hs, hs);
  }
  round_rows(tiles.dq, hs, x.dq.head(b, h) + t0 * x.dq.ld(), x.dq.ld(), rows, hs);
}

void backward_bf16(const AttentionHeads& q, const AttentionHeads& k, const AttentionHeads& v,
                   const AttentionHeads& o, const Tensor& lse, const AttentionHeads& d_o,
                   const AttentionHeads& dq, const AttentionHeads& dk, const AttentionHeads& dv,
                   const AttentionShape& shape, const ProbsDropout& dropout,
                   MemoryTracker& tracker) {
  const std::int64_t pairs = shape.batch * shape.n_kv_head, chunks = attention_chunks(pairs);
  const std::int64_t hs = shape.head_dim, block_q = query_block(shape.seq_len);
  const std::int64_t ld_p = score_row_stride(shape.kv_len);
  const auto workspace = [&](std::int64_t rows, std::int64_t cols, DType dtype) {
    // not zeroed: every tile and accumulator is written before it is read
    return Tensor::empty(Shape{chunks, rows, cols}, dtype, tracker, MemoryCategory::kWorkspace);
  };
  const Tensor p = workspace(block_q, ld_p, DType::kF32),
               ds = workspace(block_q, ld_p, DType::kF32);
  const Tensor p16 = workspace(2 * block_q, ld_p, DType::kBF16);
  const Tensor ds16 = workspace(2 * block_q, ld_p, DType::kBF16);
  const Tensor o_rows = workspace(block_q, hs, DType::kF32);
  const Tensor d_o_rows = workspace(block_q, hs, DType::kF32);
  const Tensor dq_acc = workspace(block_q, hs, DType::kF32);
  const Tensor dk_acc = workspace(shape.kv_len, hs, DType::kF32);
  const Tensor dv_acc = workspace(shape.kv_len, hs, DType::kF32);
  if (lse.device().meta) return;
  const Bf16BackwardOperands x{{q},   {k},  {v},  {o},  lse.data_as<float>(),
                               {d_o}, {dq}, {dk}, {dv}, dropout};
  const std::int64_t last_t0 = (query_blocks(shape) - 1) * block_q;
  parallel_for_chunks(
      pairs, attention_grain(pairs),
      [&](std::int64_t chunk, std::int64_t first, std::int64_t last) {
        const std::int64_t tile = chunk * block_q * ld_p, rows = chunk * block_q * hs;
        BF16* p_hi = p16.data_as<BF16>() + 2 * tile;
        BF16* ds_hi = ds16.data_as<BF16>() + 2 * tile;
        const std::int64_t kv_rows = chunk * shape.kv_len * hs;
        const Bf16BackwardTiles tiles{
            p.data_as<float>() + tile,        ds.data_as<float>() + tile,
            {p_hi, p_hi + block_q * ld_p},    {ds_hi, ds_hi + block_q * ld_p},
            o_rows.data_as<float>() + rows,   d_o_rows.data_as<float>() + rows,
            dq_acc.data_as<float>() + rows,   dk_acc.data_as<float>() + kv_rows,
            dv_acc.data_as<float>() + kv_rows};
        for (std::int64_t pair = first; pair < last; ++pair) {
          const std::int64_t b = pair / shape.n_kv_head, kv = pair % shape.n_kv_head;
          // the order of backward_kv_head: the first visit (every key) writes the accumulators
          for (std::int64_t g = 0; g < shape.group(); ++g) {
            for (std::int64_t t0 = last_t0; t0 >= 0; t0 -= block_q) {
              backward_query_block_bf16(shape, x, b, kv * shape.group() + g, kv, t0,
                                        std::min(block_q, shape.seq_len - t0),
                                        g == 0 && t0 == last_t0, tiles);
            }
          }
          round_rows(tiles.dk, hs, x.dk.head(b, kv), x.dk.ld(), shape.kv_len, hs);
          round_rows(tiles.dv, hs, x.dv.head(b, kv), x.dv.ld(), shape.kv_len, hs);
        }
      });
}

// Whether this call's bf16 operands go to the bf16 GEMM (Note [bf16 attention on bf16 GEMMs]).
bool bf16_products(const AttentionHeads& q, Bf16AttentionProducts products) {
  return q.base.dtype() == DType::kBF16 && products == Bf16AttentionProducts::kBf16WhereAvailable &&
         bf16_gemm_has_amx();
}

}  // namespace

void attention_forward(const AttentionHeads& q, const AttentionHeads& k, const AttentionHeads& v,
                       const AttentionHeads& o, const Tensor& lse, MemoryTracker& tracker,
                       Bf16AttentionProducts products, const math::DropoutMask* probs_dropout,
                       VectorIsa dropout_isa) {
  const AttentionShape shape = attention_shape_of(q, k, v, o, lse);
  check_attention_dropout(shape, probs_dropout);
  const ProbsDropout dropout{probs_dropout, dropout_isa};
  if (bf16_products(q, products)) {
    forward_bf16(q, k, v, o, lse, shape, dropout, tracker);
    return;
  }
  // the f32 workspace lives only while the heads are computed
  const F32Heads q32(q, true, tracker), k32(k, true, tracker), v32(v, true, tracker);
  const F32Heads o32(o, false, tracker);
  const Tensor scores =
      Tensor::zeros(Shape{attention_chunks(forward_units(shape)), query_block(shape.seq_len),
                          score_row_stride(shape.kv_len)},
                    DType::kF32, tracker, MemoryCategory::kWorkspace);
  if (lse.device().meta) return;  // Note [Dry kernels] in cpu_kernel_backend.cpp
  forward_heads(shape,
                {q32, k32, v32, o32, lse.data_as<float>(), scores.data_as<float>(), dropout});
  o32.store();
}

void attention_backward(const AttentionHeads& q, const AttentionHeads& k, const AttentionHeads& v,
                        const AttentionHeads& o, const Tensor& lse, const AttentionHeads& d_o,
                        const AttentionHeads& dq, const AttentionHeads& dk,
                        const AttentionHeads& dv, MemoryTracker& tracker,
                        Bf16AttentionProducts products, const math::DropoutMask* probs_dropout,
                        VectorIsa dropout_isa) {
  const AttentionShape shape = attention_shape_of(q, k, v, o, lse);
  check_attention_gradients(shape, d_o, dq, dk, dv);
  check_attention_dropout(shape, probs_dropout);
  const ProbsDropout dropout{probs_dropout, dropout_isa};
  if (bf16_products(q, products)) {
    backward_bf16(q, k, v, o, lse, d_o, dq, dk, dv, shape, dropout, tracker);
    return;
  }
  const F32Heads q32(q, true, tracker), k32(k, true, tracker), v32(v, true, tracker);
  const F32Heads o32(o, true, tracker), d_o32(d_o, true, tracker);
  const F32Heads dq32(dq, false, tracker), dk32(dk, false, tracker), dv32(dv, false, tracker);
  const std::int64_t pairs = shape.batch * shape.n_kv_head;
  const Tensor p = backward_block_workspace(attention_chunks(pairs), shape, tracker);
  const Tensor ds = backward_block_workspace(attention_chunks(pairs), shape, tracker);
  if (lse.device().meta) return;
  const BackwardOperands x{q32,
                           k32,
                           v32,
                           o32,
                           lse.data_as<float>(),
                           d_o32,
                           dq32,
                           dk32,
                           dv32,
                           p.data_as<float>(),
                           ds.data_as<float>(),
                           dropout};
  const std::int64_t block = query_block(shape.seq_len) * score_row_stride(shape.kv_len);
  parallel_for_chunks(pairs, attention_grain(pairs),
                      [&](std::int64_t chunk, std::int64_t first, std::int64_t last) {
                        for (std::int64_t pair = first; pair < last; ++pair) {
                          backward_kv_head(shape, x, pair / shape.n_kv_head, pair % shape.n_kv_head,
                                           x.p + chunk * block, x.ds + chunk * block);
                        }
                      });
  dq32.store();
  dk32.store();
  dv32.store();
}

}  // namespace zt::nn::cpu
