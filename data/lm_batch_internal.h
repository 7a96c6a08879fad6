// Pieces the language-model batch sources share (lm_sources.cpp, token_corpus.cpp): the
// batch they fill, how a window becomes a row of it, and the checks on their sizes.
#pragma once

#include <cstdint>
#include <filesystem>

#include "data/batch.h"

namespace zt::data::lm_internal {

struct LmBatch {
  Batch batch;
  std::int32_t* inputs = nullptr;   // (b, T)
  std::int32_t* targets = nullptr;  // (b, T)
};

LmBatch allocate_lm_batch(SampleRange range, std::int64_t seq_len, MemoryTracker& tracker);

// Splits a window of T + 1 tokens into row `i` of inputs and targets.
void split_window(const std::int32_t* window, std::int64_t seq_len, std::int64_t i, LmBatch& out);

// ConfigError unless seq_len >= 1.
void check_seq_len(std::int64_t seq_len);

// FormatError naming `path` unless it holds at least one window of seq_len + 1 tokens.
void check_holds_a_window(const std::filesystem::path& path, std::int64_t tokens,
                          std::int64_t seq_len);

}  // namespace zt::data::lm_internal
