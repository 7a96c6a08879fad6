// The small GPT the multirank equivalence tests train: 2 blocks of width 16 (2 heads) over a
// 16-token vocabulary and 8-token samples, lr 0.01, and 1 KiB reduce buckets so that every
// block splits into several segments. Each test adds its stage, batch and precision.
// tiny_llama_overrides: the Llama family at that size. tiny_run_overrides: a short run of it
// whose stage 3 keeps little live, for the tests of what runs beside training.
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

// The same shape as a Llama: 2 query heads sharing 1 key/value head, a SwiGLU of width 24,
// rotary embeddings with Llama 3's base.
inline std::vector<std::string> tiny_llama_overrides() {
  std::vector<std::string> overrides = tiny_gpt_overrides();
  overrides.insert(overrides.end(), {"model.type=llama", "model.n_kv_head=1", "model.ffn_dim=24",
                                     "model.rope_theta=500000"});
  return overrides;
}

// `steps` steps at `stage` of 8 samples a step in micro-batches of 2 (2 ranks: 2 each); at
// stage 3 a small cap, so prefetching and releasing decide what is live.
inline std::vector<std::string> tiny_run_overrides(int stage, int steps) {
  std::vector<std::string> overrides = tiny_gpt_overrides();
  overrides.insert(overrides.end(),
                   {"train.steps=" + std::to_string(steps), "train.global_batch_size=8",
                    "train.micro_batch_size=2", "zero.stage=" + std::to_string(stage),
                    "zero.prefetch_blocks=1", "zero.param_persistence_threshold=0"});
  return overrides;
}

}  // namespace zt::testing
