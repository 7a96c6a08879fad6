// checkpoint.init_from: a model's fp32 master weights from Hugging Face safetensors
// (Note [Hugging Face names]) or from an export under our own names (zerotrain_naming). HfImport
// matches the files' tensors with the model's parameters once, refusing any that is missing, left
// over or of another shape (naming the Hugging Face tensor and our parameter); then each rank reads
// the element runs of its own shard only, transposing and padding as it goes, a bounded piece at a
// time.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "runtime/checkpoint/hf_names.h"
#include "runtime/checkpoint/hf_weights.h"
#include "sharding/state_shard.h"
#include "sharding/zero_strategy.h"

namespace zt::checkpoint {

class HfImport {
 public:
  // `weights` must outlive this. Throws Error naming both sides of the first mismatch.
  HfImport(const HfWeights& weights, HfNaming naming);

  // Elements [begin, begin + count) of the model's unpadded flat order (every element of a
  // tied parameter's source counts once, as in describe_parameters) into `out`. Throws Error
  // naming the file's tensor and element when a value read is NaN or infinite (training
  // from it would only say, steps later, that the loss is not finite).
  void read(std::int64_t begin, std::int64_t count, float* out) const;
  // Every run of `shard` into `out` at its shard offset; the rest (padding) zero.
  void read_shard(const zero::StateShard& shard, float* out) const;

 private:
  struct Part {
    HfTensorRef ref;
    std::int64_t first_row = 0;  // our rows [first_row, first_row + rows) come from it
    std::int64_t rows = 0;
  };
  struct Source {
    HfParameterNames names;
    std::int64_t rows = 0;
    std::int64_t columns = 0;
    std::vector<Part> parts;
  };
  Source match(const HfParameterNames& names, std::vector<std::string>& used) const;
  // Rows [first_row, first_row + rows) of `source` in our layout, into `out` (rows x columns).
  void read_rows(const Source& source, std::int64_t first_row, std::int64_t rows, float* out) const;

  const HfWeights& weights_;
  HfNaming naming_;
  // Whether the file writes its body's tensors under naming_.body_prefix ("transformer."):
  // a missing tensor is then named as the file would name it.
  bool file_uses_body_prefix_ = false;
  std::vector<Source> sources_;  // by parameter, in layout order
};

// Agrees over the ranks whether something failed: the element-wise maximum of every rank's
// values (the trainer's control lane), as CheckpointerHooks::agree_max.
using AgreeMax = std::function<std::array<float, 2>(std::array<float, 2>)>;

// Fills `strategy`'s masters from checkpoint.init_from (every rank its load_shard()'s
// runs), with zero optimizer states, before the first step. Collective: nothing is imported
// unless every rank read its part. Throws Error naming checkpoint.init_from and the file.
void init_from_hugging_face(const Config& config, zero::ZeroStrategy& strategy,
                            int optimizer_states, int rank, const AgreeMax& agree_max);

}  // namespace zt::checkpoint
