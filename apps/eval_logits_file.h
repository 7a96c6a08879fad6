// EvalLogitsFile: what `zerotrain eval --logits FILE` writes: the validation windows' outputs
// as one NumPy .npy, float32, shaped (windows, seq_len, vocabulary) for a language model
// (windows, outputs...) otherwise, at any world size (Note [Logits of several ranks]).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "data/safe_file.h"
#include "runtime/engine/validation_outputs.h"

namespace zt::apps {

// Note [Logits of several ranks]
// Each rank evaluates its even share of the windows (Note [Validation samples]), and the
// shares follow each other in rank order, rank 0's first. Rank 0 writes the .npy header and
// its own windows into the file's temp file; every other rank writes its windows, headerless,
// into "FILE.rank-K.part" beside it and commits that part as soon as its share is complete,
// before it joins the all-reduce that ends validation_loss, so when that returns on rank 0
// every part is whole. Rank 0 then appends the parts in rank order, checks each one's size,
// moves the file into place (Note [Replacing an output]) and removes the parts. Ranks on
// several nodes therefore need FILE's directory on a filesystem they share, as checkpoint.dir
// is; a part rank 0 cannot see is an error naming it. A language model's logits keep only the
// data's vocabulary (model.data_vocab_size): padded rows are never a prediction.
class EvalLogitsFile {
 public:
  // `columns`: the values of each output row kept (the data's vocabulary; 0 keeps all).
  // Checks FILE as the output it will replace (or, with kRefuse, not replace) first.
  EvalLogitsFile(std::filesystem::path path, data::ExistingOutput existing, int rank,
                 int world_size, std::int64_t windows, std::int64_t columns);
  ~EvalLogitsFile();

  // One micro-batch of this rank's windows, in order (the validation sink).
  void write(const engine::ValidationOutputs& outputs);
  // Rank 0, after validation_loss returned: appends the other ranks' parts, moves the file
  // into place and removes the parts. The others: nothing (their part is committed).
  void finish();
  // The .npy's shape, once rank 0 has written its first windows.
  const std::vector<std::int64_t>& shape() const { return shape_; }

 private:
  std::filesystem::path part_path(int rank) const;

  std::filesystem::path path_;
  data::ExistingOutput existing_;
  int rank_;
  int world_size_;
  std::int64_t windows_;
  std::int64_t columns_;
  std::int64_t share_end_;    // the first window after this rank's share
  std::int64_t written_ = 0;  // windows written so far
  std::int64_t window_values_ = 0;
  std::vector<std::int64_t> shape_;
  std::unique_ptr<data::AtomicOutputFile> file_;  // rank 0: FILE; others: their part
  std::uint64_t offset_ = 0;
};

}  // namespace zt::apps
