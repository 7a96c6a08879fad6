// ValidationOutputs: the model's outputs of validation windows, as Trainer::validation_loss
// hands them to a caller that asked for them (`zerotrain eval --logits`).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace zt::engine {

// One micro-batch: windows [first_window, first_window + windows) of the validation set,
// each of `window_shape` (a language model's (seq_len, vocab_size) logits), f32, row-major,
// window after window. `values` lives only during the call.
struct ValidationOutputs {
  std::int64_t first_window = 0;
  std::int64_t windows = 0;
  std::vector<std::int64_t> window_shape;
  std::span<const float> values;
};

using ValidationOutputSink = std::function<void(const ValidationOutputs&)>;

}  // namespace zt::engine
