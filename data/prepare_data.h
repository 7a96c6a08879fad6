// prepare-data: turns a text file into a token file with a byte-level vocabulary (each
// byte of the input is one token in [0, 256)), the simplest tokenizer that loses nothing.
#pragma once

#include <cstdint>
#include <filesystem>

namespace zt::data {

inline constexpr std::uint32_t kByteVocabSize = 256;

struct PrepareDataStats {
  std::int64_t input_bytes = 0;
  std::int64_t tokens = 0;           // equals input_bytes for the byte-level vocabulary
  std::int64_t distinct_tokens = 0;  // byte values that occur at least once
  std::uint32_t vocab_size = kByteVocabSize;
};

// Streams `input_text` (a regular file; FIFOs, devices and directories are refused before
// reading) into a token file at `output_bin`, in bounded memory. The output must be absent
// or a regular file other than the input, and is replaced atomically (Note [Replacing an
// output] in safe_file.h). Throws IoError naming the path when the input cannot be read or
// the output written, and FormatError when the input is empty.
PrepareDataStats prepare_data(const std::filesystem::path& input_text,
                              const std::filesystem::path& output_bin);

}  // namespace zt::data
