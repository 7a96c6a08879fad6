// Data: a BatchSource returns the samples of a range of sample indices. The engine's sampler
// hands each rank its own ranges (every rank a different part of each global batch), so a
// source needs no knowledge of ranks: it maps an index to a sample, deterministically.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "data/batch.h"
#include "data/distributed_sampler.h"
#include "zerotrain/tensor.h"

namespace zerotrain {

using zt::data::Batch;        // inputs and targets, samples along the first axis
using zt::data::BatchSource;  // load(range, tracker): allocate from tracker, as activations
using zt::data::SampleRange;  // [first, first + count) sample indices

// Sequences of seq_len + 1 tokens from a token file `zerotrain prepare-data` wrote: inputs
// (b, seq_len) i32 and targets shifted by one. Sample i is a window at a position drawn from
// `seed` and i. Throws IoError or FormatError naming the file.
std::unique_ptr<BatchSource> token_file_source(const std::filesystem::path& path,
                                               std::int64_t seq_len, std::uint64_t seed);

// The built-in synthetic classification task: inputs (b, input_dim) f32, targets (b) i32.
std::unique_ptr<BatchSource> synthetic_classification_source(std::uint64_t seed,
                                                             std::int64_t input_dim,
                                                             std::int64_t num_classes);

}  // namespace zerotrain
