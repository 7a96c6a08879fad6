// The small GPT the multirank equivalence tests train: 2 blocks of width 16 (2 heads) over a
// 16-token vocabulary and 8-token samples, lr 0.01, and 1 KiB reduce buckets so that every
// block splits into several segments. Each test adds its stage, batch and precision.
#pragma once

#include <string>
#include <vector>

namespace zt::testing {

inline std::vector<std::string> tiny_gpt_overrides() {
  return {"model.type=gpt",      "model.n_layer=2",
          "model.n_head=2",      "model.d_model=16",
          "model.vocab_size=16", "model.seq_len=8",
          "optimizer.lr=0.01",   "zero.reduce_bucket_size=1KiB"};
}

}  // namespace zt::testing
