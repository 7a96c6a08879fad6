// Chunked token-file writing with explicit little-endian encoding.
#include "data/token_file_writer.h"

#include <algorithm>

#include "core/error.h"
#include "data/token_file.h"
#include "data/token_file_format.h"

namespace zt::data {
namespace {

using namespace token_format;

constexpr std::size_t kChunkTokens = std::size_t{1} << 16;

std::uint32_t checked_vocab(const std::filesystem::path& path, std::uint32_t vocab_size) {
  if (vocab_size == 0 || vocab_size > kMaxVocabSize) {
    throw FormatError("cannot write " + name(path) + ": vocabulary size " +
                      std::to_string(vocab_size) + " is outside [1, 2^31]");
  }
  return vocab_size;
}

std::array<unsigned char, kTokenFileHeaderBytes> header_bytes(std::uint32_t vocab_size,
                                                              std::uint64_t token_count) {
  std::array<unsigned char, kTokenFileHeaderBytes> header{};
  std::copy(kMagic.begin(), kMagic.end(), header.begin());
  put_le(header.data() + 8, kTokenFileVersion, 4);
  put_le(header.data() + 12, vocab_size, 4);
  put_le(header.data() + 16, token_count, 8);
  put_le(header.data() + 24, width_for(vocab_size), 4);
  return header;
}

}  // namespace

TokenFileWriter::TokenFileWriter(const std::filesystem::path& path, std::uint32_t vocab_size,
                                 std::optional<FileIdentity> input, ExistingOutput existing)
    : path_(path),
      vocab_size_(checked_vocab(path, vocab_size)),
      width_(width_for(vocab_size)),
      out_(path, "token file", input, existing) {
  // The count is not known yet: a header saying 0 tokens, rewritten by finish().
  const auto header = header_bytes(vocab_size_, 0);
  out_.write(header.data(), header.size());
  chunk_.resize(kChunkTokens * width_);
}

void TokenFileWriter::append(std::span<const std::int32_t> tokens) {
  for (std::size_t first = 0; first < tokens.size(); first += kChunkTokens) {
    const std::size_t count = std::min(kChunkTokens, tokens.size() - first);
    for (std::size_t i = 0; i < count; ++i) {
      const std::int32_t token = tokens[first + i];
      if (token < 0 || static_cast<std::uint32_t>(token) >= vocab_size_) {
        throw FormatError("cannot write " + name(path_) + ": " +
                          outside_vocabulary(token, tokens_written_ + first + i, vocab_size_));
      }
      put_le(chunk_.data() + i * width_, static_cast<std::uint32_t>(token), width_);
    }
    out_.write(chunk_.data(), count * width_);
  }
  tokens_written_ += tokens.size();
}

void TokenFileWriter::finish() {
  const auto header = header_bytes(vocab_size_, tokens_written_);
  out_.write_at(0, header.data(), header.size());
  out_.commit();
}

}  // namespace zt::data
