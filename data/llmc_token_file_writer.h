// LlmcTokenFileWriter: writes llm.c's token file format (Note [llm.c token files]) in
// bounded memory, the header's count filled in at the end, the file replaced atomically.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

#include "data/safe_file.h"

namespace zt::data {

// Note [llm.c token files]
// A header of 256 little-endian int32: [0] the magic, [1] the version, [2] the token count
// (so at most 2^31 - 1 tokens), the rest zero; then the tokens, little-endian. Magic
// 20240520 version 1 holds uint16 tokens (GPT-2's 50257-token vocabulary); magic 20240801
// version 7 holds uint32 tokens (llm.c's Llama 3 files), used here when the vocabulary has
// more than 65536 tokens.
inline constexpr std::int32_t kLlmcMagicU16 = 20240520;
inline constexpr std::int32_t kLlmcVersionU16 = 1;
inline constexpr std::int32_t kLlmcMagicU32 = 20240801;
inline constexpr std::int32_t kLlmcVersionU32 = 7;
inline constexpr std::size_t kLlmcHeaderInts = 256;

class LlmcTokenFileWriter {
 public:
  // Checks `path` (Note [Replacing an output]; `input` is the file it must not be, `existing`
  // what to do with a file already there) and starts a temp file beside it. FormatError for a
  // vocabulary outside [1, 2^32].
  LlmcTokenFileWriter(const std::filesystem::path& path, std::uint64_t vocab_size,
                      std::optional<FileIdentity> input = std::nullopt,
                      ExistingOutput existing = ExistingOutput::kReplace);

  // Appends tokens, each in [0, vocab_size); FormatError naming the position otherwise, or
  // when the count would pass the header's int32.
  void append(std::span<const std::int32_t> tokens);
  std::uint64_t tokens_written() const { return tokens_written_; }
  std::uint32_t token_bytes() const { return width_; }
  // Writes the header and moves the file into place; without it nothing replaces `path`.
  void finish();

 private:
  std::filesystem::path path_;
  std::uint64_t vocab_size_;
  std::uint32_t width_;  // bytes per token: 2 or 4
  std::uint64_t tokens_written_ = 0;
  std::vector<unsigned char> chunk_;
  AtomicOutputFile out_;
};

}  // namespace zt::data
