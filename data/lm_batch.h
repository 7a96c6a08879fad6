// Language-model batch sources: windows of seq_len + 1 tokens, as inputs (b, T) and
// next-token targets (b, T), both i32. Sample i depends only on (seed, i), never on the
// rank or world size that asks for it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "data/batch.h"
#include "data/markov_corpus.h"
#include "data/token_file.h"

namespace zt::data {

// Sample i is MarkovCorpus(seed, vocab_size, peakedness).sequence(i) of seq_len + 1 tokens.
std::unique_ptr<BatchSource> make_markov_source(std::uint64_t seed, std::int32_t vocab_size,
                                                std::int64_t seq_len,
                                                double peakedness = kDefaultMarkovPeakedness);

// Sample i is the window of the file's tokens starting at mix64(seed, i) mod (size - seq_len)
// (Note [Windows of a corpus] in window_index.h), read from the file per batch and checked
// against its vocabulary then (see token_corpus.h). Throws what open_token_shard throws, and
// FormatError when the file holds fewer than seq_len + 1 tokens.
std::unique_ptr<BatchSource> make_token_file_source(const std::filesystem::path& path,
                                                    std::int64_t seq_len, std::uint64_t seed);
// The same windows of a file already held in memory.
std::unique_ptr<BatchSource> make_token_file_source(TokenFile file, std::int64_t seq_len,
                                                    std::uint64_t seed);

}  // namespace zt::data
