// The zerotrain token file: a little-endian header (magic, version, vocabulary, token
// count, token width) followed by the tokens. Writing is atomic (a temp file renamed into
// place, see token_file_writer.h); opening validates everything and reads the tokens fully
// into memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <utility>
#include <vector>

namespace zt::data {

// Note [Token file layout] (all integers little-endian)
//   offset  0  8 bytes  magic "ZTTOK\0\0\0"
//   offset  8  u32      format version (kTokenFileVersion)
//   offset 12  u32      vocabulary size V (tokens are in [0, V))
//   offset 16  u64      token count N
//   offset 24  u32      token width in bytes: 1, 2 or 4, the smallest that holds V - 1
//   offset 28  u32      reserved, 0
//   offset 32  N tokens, each an unsigned integer of the token width
inline constexpr std::uint32_t kTokenFileVersion = 1;
inline constexpr std::size_t kTokenFileHeaderBytes = 32;

// Writes `tokens` (each in [0, vocab_size)) to `path` through a temp file and a rename, so
// a crash never leaves a half-written file under the real name; `path` must be absent or a
// regular file (Note [Replacing an output] in safe_file.h). Throws IoError when the file
// cannot be written and FormatError for a token outside the vocabulary.
void write_token_file(const std::filesystem::path& path, std::span<const std::int32_t> tokens,
                      std::uint32_t vocab_size);

struct TokenFileHeader {
  std::uint32_t version = 0;
  std::uint32_t vocab_size = 0;
  std::uint64_t token_count = 0;
  std::uint32_t token_width = 0;
};

// Validates the header of a token file of `file_bytes` bytes whose first
// min(file_bytes, kTokenFileHeaderBytes) bytes are `first_bytes`, against the file's size
// too (truncated, trailing bytes). Throws FormatError naming `path`.
TokenFileHeader parse_token_file_header(const std::filesystem::path& path,
                                        std::span<const unsigned char> first_bytes,
                                        std::uint64_t file_bytes);

// An opened, validated token file, held fully in memory as i32 tokens (4 bytes a token
// whatever the width on disk; corpora in this project fit in host memory, and a plain
// vector keeps windows a memcpy away).
class TokenFile {
 public:
  // Throws IoError when `path` cannot be read and FormatError when its contents are not a
  // valid token file (bad magic, newer version, truncated, token outside the vocabulary).
  // Only a regular file is read (a FIFO or device is refused before reading).
  static TokenFile open(const std::filesystem::path& path);
  // The same checks on a whole file's bytes already in memory, named `path` in messages.
  static TokenFile from_bytes(const std::filesystem::path& path,
                              std::span<const unsigned char> bytes);

  const std::filesystem::path& path() const { return path_; }
  std::uint32_t vocab_size() const { return vocab_size_; }
  std::int64_t size() const { return static_cast<std::int64_t>(tokens_.size()); }
  std::int32_t token(std::int64_t i) const;
  // Tokens [first, first + out.size()) into `out`.
  void read(std::int64_t first, std::span<std::int32_t> out) const;
  std::span<const std::int32_t> tokens() const { return tokens_; }

 private:
  TokenFile(std::filesystem::path path, std::uint32_t vocab_size, std::vector<std::int32_t> tokens)
      : path_(std::move(path)), vocab_size_(vocab_size), tokens_(std::move(tokens)) {}

  std::filesystem::path path_;
  std::uint32_t vocab_size_;
  std::vector<std::int32_t> tokens_;
};

}  // namespace zt::data
