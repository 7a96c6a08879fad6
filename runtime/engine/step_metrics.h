// StepMetrics: what one optimizer step measured, as metrics.jsonl, the progress line and a
// library user's step callback see it.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace zt::engine {

struct StepMetrics {
  std::int64_t step = 0;
  double loss = 0;
  double lr = 0;
  double grad_norm = 0;
  double samples_per_s = 0;
  // Predicted positions per second (GPT: samples × seq_len); NaN, written as null, for
  // models without tokens (the MLP), whose throughput is samples_per_s.
  double tokens_per_s = 0;
  double step_ms = 0;
  double loss_scale = 1;  // fp16 dynamic loss scale used by the step
  bool skipped = false;   // the step's gradients overflowed and no update was made
                          // (grad_norm is then NaN, written as null)
  // Bytes this rank sent in the step (and the evaluation after it, when it evaluated), per
  // collective (payload, as the counters count them).
  std::uint64_t all_reduce_bytes = 0;
  std::uint64_t reduce_scatter_bytes = 0;
  std::uint64_t all_gather_bytes = 0;
  std::uint64_t all_to_all_bytes = 0;  // qgZ's hops (zero.quantized_gradients)
  // Every collective's bytes (the four above, and a sample's broadcasts) split by where
  // they went: to ranks on this rank's node and to ranks on other nodes (Note [Counting
  // bytes by node]). A one-node job sends nothing across nodes.
  std::uint64_t intra_node_bytes = 0;
  std::uint64_t cross_node_bytes = 0;
  // The validation loss measured after this step (train.eval_every); NaN on steps that do
  // not evaluate (metrics.jsonl then has no val_loss field).
  double val_loss = std::numeric_limits<double>::quiet_NaN();
  // Rank 0's train.sample_every text after this step (the prompt and the new tokens,
  // decoded); "" on steps that do not sample and on the other ranks.
  std::string sample;
  // The prompt `sample` starts with (a prefix of it; metrics.jsonl's sample_prompt), so that
  // what the model wrote is sample's rest.
  std::string sample_prompt;
};

}  // namespace zt::engine
