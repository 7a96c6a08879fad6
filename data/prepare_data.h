// prepare-data: turns a text file into a token file, either with a byte-level vocabulary
// (each byte of the input is one token in [0, 256), the simplest tokenizer that loses
// nothing) or with a byte-level BPE tokenizer into llm.c's token file format.
#pragma once

#include <cstdint>
#include <filesystem>

#include "data/safe_file.h"

namespace zt::data {

class BpeTokenizer;

inline constexpr std::uint32_t kByteVocabSize = 256;

struct PrepareDataStats {
  std::int64_t input_bytes = 0;
  std::int64_t tokens = 0;           // equals input_bytes for the byte-level vocabulary
  std::int64_t distinct_tokens = 0;  // token values that occur at least once
  std::uint32_t vocab_size = kByteVocabSize;
  const char* format = "zerotrain";  // "zerotrain", or "llm.c" (Note [llm.c token files])
};

// Streams `input_text` (a regular file; FIFOs, devices and directories are refused before
// reading) into a token file at `output_bin`, in bounded memory. The output must be absent
// or a regular file other than the input, which `existing` says whether to replace
// (atomically, Note [Replacing an output] in safe_file.h) or refuse. Throws IoError naming the path
// when the input cannot be read or the output written, and FormatError when the input is empty.
PrepareDataStats prepare_data(const std::filesystem::path& input_text,
                              const std::filesystem::path& output_bin,
                              ExistingOutput existing = ExistingOutput::kReplace);

// The same with `tokenizer`: the text (UTF-8) is encoded chunk by chunk, cut only between
// final pre-tokens (Note [Encoding a stream]), into llm.c's format (uint16 tokens, or uint32
// past 65536 tokens). Also FormatError naming the byte offset of text that is not UTF-8.
PrepareDataStats prepare_data(const std::filesystem::path& input_text,
                              const std::filesystem::path& output_bin, BpeTokenizer& tokenizer,
                              ExistingOutput existing = ExistingOutput::kReplace);

}  // namespace zt::data
