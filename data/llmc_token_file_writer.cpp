// Chunked writing of llm.c token files with explicit little-endian encoding.
#include "data/llmc_token_file_writer.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "core/error.h"

namespace zt::data {
namespace {

constexpr std::size_t kChunkTokens = std::size_t{1} << 16;
constexpr std::uint64_t kMaxTokens = std::numeric_limits<std::int32_t>::max();

void put_le(unsigned char* dst, std::uint64_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) dst[i] = static_cast<unsigned char>(value >> (8 * i));
}

std::string name(const std::filesystem::path& path) {
  return "llm.c token file '" + path.string() + "'";
}

std::uint32_t width_for(const std::filesystem::path& path, std::uint64_t vocab_size) {
  if (vocab_size == 0 || vocab_size > (std::uint64_t{1} << 32)) {
    throw FormatError("cannot write " + name(path) + ": vocabulary size " +
                      std::to_string(vocab_size) + " is outside [1, 2^32]");
  }
  return vocab_size <= 0x10000u ? 2 : 4;
}

std::array<unsigned char, kLlmcHeaderInts * 4> header_bytes(std::uint32_t width,
                                                            std::uint64_t token_count) {
  std::array<unsigned char, kLlmcHeaderInts * 4> header{};
  put_le(header.data(), width == 2 ? kLlmcMagicU16 : kLlmcMagicU32, 4);
  put_le(header.data() + 4, width == 2 ? kLlmcVersionU16 : kLlmcVersionU32, 4);
  put_le(header.data() + 8, token_count, 4);
  return header;
}

}  // namespace

LlmcTokenFileWriter::LlmcTokenFileWriter(const std::filesystem::path& path,
                                         std::uint64_t vocab_size,
                                         std::optional<FileIdentity> input, ExistingOutput existing)
    : path_(path),
      vocab_size_(vocab_size),
      width_(width_for(path, vocab_size)),
      out_(path, "token file", input, existing) {
  // The count is not known yet: a header saying 0 tokens, rewritten by finish().
  const auto header = header_bytes(width_, 0);
  out_.write(header.data(), header.size());
  chunk_.resize(kChunkTokens * width_);
}

void LlmcTokenFileWriter::append(std::span<const std::int32_t> tokens) {
  if (tokens_written_ + tokens.size() > kMaxTokens) {
    throw FormatError("cannot write " + name(path_) + ": more than " + std::to_string(kMaxTokens) +
                      " tokens, the most its int32 header can count; split the input text");
  }
  for (std::size_t first = 0; first < tokens.size(); first += kChunkTokens) {
    const std::size_t count = std::min(kChunkTokens, tokens.size() - first);
    for (std::size_t i = 0; i < count; ++i) {
      const std::int32_t token = tokens[first + i];
      if (token < 0 || static_cast<std::uint64_t>(token) >= vocab_size_) {
        throw FormatError("cannot write " + name(path_) + ": token " + std::to_string(token) +
                          " at position " + std::to_string(tokens_written_ + first + i) +
                          " is outside the vocabulary of " + std::to_string(vocab_size_));
      }
      put_le(chunk_.data() + i * width_, static_cast<std::uint32_t>(token), width_);
    }
    out_.write(chunk_.data(), count * width_);
  }
  tokens_written_ += tokens.size();
}

void LlmcTokenFileWriter::finish() {
  const auto header = header_bytes(width_, tokens_written_);
  out_.write_at(0, header.data(), header.size());
  out_.commit();
}

}  // namespace zt::data
