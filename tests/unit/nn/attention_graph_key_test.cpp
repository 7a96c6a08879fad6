// AttentionGraphKey: a cuDNN attention graph is shared by calls of one layout and rebuilt for
// any other geometry, stride, dtype or direction.
#include "nn/kernels/attention_graph_key.h"

#include <gtest/gtest.h>

#include <map>

#include "core/memory_tracker.h"
#include "core/tensor.h"

namespace zt::nn {
namespace {

struct Call {
  QkvHeads qkv;
  AttentionHeads o;
  AttentionShape shape;
};

Call call_on(MemoryTracker& tracker, std::int64_t batch, std::int64_t seq_len, std::int64_t n_head,
             std::int64_t n_kv_head, std::int64_t head_dim, DType dtype = DType::kBF16) {
  const Tensor qkv = Tensor::zeros(Shape{batch, seq_len, (n_head + 2 * n_kv_head) * head_dim},
                                   dtype, tracker, MemoryCategory::kActivations);
  const Tensor y = Tensor::zeros(Shape{batch, seq_len, n_head * head_dim}, dtype, tracker,
                                 MemoryCategory::kActivations);
  const QkvHeads heads = split_qkv(qkv, n_head, n_kv_head);
  const AttentionHeads o = AttentionHeads::packed(y, n_head);
  return {heads, o, {batch, seq_len, n_head, n_kv_head, head_dim, seq_len}};
}

AttentionGraphKey forward_key(const Call& c) {
  return attention_graph_key(c.shape, false, {&c.qkv.q, &c.qkv.k, &c.qkv.v, &c.o});
}

TEST(AttentionGraphKey, CallsOfOneLayoutOnOtherTensorsShareTheGraph) {
  MemoryTracker tracker(Device::cpu());
  const Call first = call_on(tracker, 2, 64, 4, 4, 32);
  const Call second = call_on(tracker, 2, 64, 4, 4, 32);  // another layer's tensors
  ASSERT_NE(first.qkv.q.base.data(), second.qkv.q.base.data());
  EXPECT_EQ(forward_key(first), forward_key(second));
  // Batch, seq and head strides of q, k, v and o; their offsets are bound per call.
  EXPECT_EQ(forward_key(first).strides.size(), 12u);
}

TEST(AttentionGraphKey, GeometryDtypeDirectionAndStridesEachMakeANewGraph) {
  MemoryTracker tracker(Device::cpu());
  const Call base = call_on(tracker, 2, 64, 4, 4, 32);
  std::map<AttentionGraphKey, int> graphs;
  graphs[forward_key(base)] = 0;
  const Call others[] = {call_on(tracker, 3, 64, 4, 4, 32), call_on(tracker, 2, 65, 4, 4, 32),
                         call_on(tracker, 2, 64, 4, 2, 32),  // grouped-query
                         call_on(tracker, 2, 64, 2, 2, 64),  // the same width, other heads
                         call_on(tracker, 2, 64, 4, 4, 32, DType::kF16)};
  for (const Call& other : others) graphs[forward_key(other)] = 1;
  EXPECT_EQ(graphs.size(), 1u + std::size(others));

  // The same shape with o read from a wider tensor: only a stride differs.
  const Tensor wide =
      Tensor::zeros(Shape{2, 64, 2 * 4 * 32}, DType::kBF16, tracker, MemoryCategory::kActivations);
  Call strided = base;
  strided.o = AttentionHeads::columns(wide, 0, 4, 32);
  EXPECT_NE(forward_key(strided), forward_key(base));

  const AttentionGraphKey backward =
      attention_graph_key(base.shape, true,
                          {&base.qkv.q, &base.qkv.k, &base.qkv.v, &base.o, &base.o, &base.qkv.q,
                           &base.qkv.k, &base.qkv.v});
  EXPECT_NE(backward, forward_key(base));
  EXPECT_TRUE(backward.backward);
  EXPECT_EQ(backward.strides.size(), 24u);
}

}  // namespace
}  // namespace zt::nn
