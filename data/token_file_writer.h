// TokenFileWriter: writes a token file in bounded memory, tokens appended in chunks, the
// header's count filled in at the end, the file replaced atomically (see safe_file.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

#include "data/safe_file.h"

namespace zt::data {

class TokenFileWriter {
 public:
  // Checks `path` (Note [Replacing an output]; `input` is the file it must not be, `existing`
  // what to do with a file already there) and starts a temp file beside it. Throws IoError naming
  // the path, FormatError for a vocabulary outside [1, 2^31].
  TokenFileWriter(const std::filesystem::path& path, std::uint32_t vocab_size,
                  std::optional<FileIdentity> input = std::nullopt,
                  ExistingOutput existing = ExistingOutput::kReplace);

  // Appends tokens, each in [0, vocab_size) (FormatError naming its position otherwise).
  void append(std::span<const std::int32_t> tokens);
  std::uint64_t tokens_written() const { return tokens_written_; }
  // Writes the header and moves the file into place; without it nothing replaces `path`.
  void finish();

 private:
  std::filesystem::path path_;
  std::uint32_t vocab_size_;
  std::uint32_t width_;
  std::uint64_t tokens_written_ = 0;
  std::vector<unsigned char> chunk_;
  AtomicOutputFile out_;
};

}  // namespace zt::data
