// Validating and reading token files with explicit little-endian decoding, so a file means
// the same on every host (see Note [Token file layout] in token_file.h).
#include "data/token_file.h"

#include <algorithm>
#include <array>
#include <string>

#include "core/error.h"
#include "data/safe_file.h"
#include "data/token_file_format.h"
#include "data/token_file_writer.h"

namespace zt::data {
namespace {

namespace fs = std::filesystem;
using namespace token_format;

constexpr std::size_t kChunkTokens = std::size_t{1} << 16;
constexpr const char* kHowToMake = "create one with `zerotrain prepare-data INPUT OUT.bin`";

std::string describe_magic(const unsigned char* bytes, std::size_t count) {
  std::string out;
  constexpr const char* kHex = "0123456789abcdef";
  for (std::size_t i = 0; i < count; ++i) {
    const unsigned char c = bytes[i];
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return "\"" + out + "\"";
}

// Decodes `count` tokens of `header.token_width` bytes from `bytes` into `out`, checking
// each against the vocabulary; `first` is the position of the first one in the file.
void decode_tokens(const fs::path& path, const TokenFileHeader& header, const unsigned char* bytes,
                   std::size_t count, std::uint64_t first, std::int32_t* out) {
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t value = get_le(bytes + i * header.token_width, header.token_width);
    if (value >= header.vocab_size) {
      throw FormatError(
          name(path) + ": " +
          outside_vocabulary(static_cast<std::int64_t>(value), first + i, header.vocab_size) +
          "; the file is corrupt or was written with another vocabulary");
    }
    out[i] = static_cast<std::int32_t>(value);
  }
}

void read_exactly(InputFile& in, const fs::path& path, unsigned char* buffer, std::size_t bytes,
                  const std::string& what) {
  std::size_t have = 0;
  while (have < bytes) {
    const std::size_t got = in.read_some(buffer + have, bytes - have);
    if (got == 0) {
      throw IoError("cannot read " + what + " of " + name(path) +
                    ": the file ended early (was it changed while being read?)");
    }
    have += got;
  }
}

}  // namespace

TokenFileHeader parse_token_file_header(const fs::path& path,
                                        std::span<const unsigned char> first_bytes,
                                        std::uint64_t file_bytes) {
  const std::size_t have = std::min<std::size_t>(
      first_bytes.size(), static_cast<std::size_t>(std::min<std::uint64_t>(file_bytes, 8)));
  if (file_bytes == 0) {
    throw FormatError(name(path) + ": the file is empty, not a zerotrain token file; " +
                      kHowToMake);
  }
  if (!std::equal(first_bytes.begin(), first_bytes.begin() + static_cast<std::ptrdiff_t>(have),
                  kMagic.begin()) ||
      have < std::min<std::uint64_t>(file_bytes, 8)) {
    throw FormatError(name(path) + ": not a zerotrain token file (magic " +
                      describe_magic(first_bytes.data(), have) +
                      ", expected \"ZTTOK\\x00\\x00\\x00\"); " + kHowToMake);
  }
  if (file_bytes < kTokenFileHeaderBytes || first_bytes.size() < kTokenFileHeaderBytes) {
    throw FormatError(name(path) + ": truncated: the header needs " +
                      std::to_string(kTokenFileHeaderBytes) + " bytes, file holds " +
                      std::to_string(std::min<std::uint64_t>(file_bytes, first_bytes.size())) +
                      "; re-create it");
  }
  const unsigned char* bytes = first_bytes.data();
  TokenFileHeader header;
  header.version = static_cast<std::uint32_t>(get_le(bytes + 8, 4));
  header.vocab_size = static_cast<std::uint32_t>(get_le(bytes + 12, 4));
  header.token_count = get_le(bytes + 16, 8);
  header.token_width = static_cast<std::uint32_t>(get_le(bytes + 24, 4));
  if (header.version > kTokenFileVersion) {
    throw FormatError(name(path) + ": format version " + std::to_string(header.version) +
                      " is newer than this zerotrain (" + std::to_string(kTokenFileVersion) +
                      "); upgrade zerotrain or re-create the file with this one");
  }
  if (header.version == 0) {
    throw FormatError(name(path) + ": format version 0 is invalid; re-create the file");
  }
  if (header.vocab_size == 0 || header.vocab_size > kMaxVocabSize) {
    throw FormatError(name(path) + ": vocabulary size " + std::to_string(header.vocab_size) +
                      " is outside [1, 2^31]; re-create the file");
  }
  if (header.token_width != 1 && header.token_width != 2 && header.token_width != 4) {
    throw FormatError(name(path) + ": token width " + std::to_string(header.token_width) +
                      " bytes is not 1, 2 or 4; re-create the file");
  }
  const std::uint64_t held = (file_bytes - kTokenFileHeaderBytes) / header.token_width;
  if (held < header.token_count) {
    throw FormatError(name(path) + ": truncated: header says " +
                      std::to_string(header.token_count) + " tokens, file holds " +
                      std::to_string(held) + "; re-create it");
  }
  // held >= token_count, so token_count * width <= file_bytes - header: no overflow.
  const std::uint64_t expected_bytes =
      kTokenFileHeaderBytes + header.token_count * header.token_width;
  if (file_bytes != expected_bytes) {
    throw FormatError(name(path) + ": " + std::to_string(file_bytes - expected_bytes) +
                      " bytes follow the " + std::to_string(header.token_count) +
                      " tokens its header announces; the file is corrupt, re-create it");
  }
  return header;
}

void write_token_file(const fs::path& path, std::span<const std::int32_t> tokens,
                      std::uint32_t vocab_size) {
  TokenFileWriter writer(path, vocab_size);
  writer.append(tokens);
  writer.finish();
}

TokenFile TokenFile::open(const fs::path& path) {
  InputFile in = InputFile::open(path, "token file", kHowToMake);
  const std::uint64_t file_bytes = in.size_bytes();
  std::array<unsigned char, kTokenFileHeaderBytes> header_bytes{};
  const auto header_read =
      static_cast<std::size_t>(std::min<std::uint64_t>(file_bytes, kTokenFileHeaderBytes));
  read_exactly(in, path, header_bytes.data(), header_read, "the header");
  const TokenFileHeader header =
      parse_token_file_header(path, std::span(header_bytes.data(), header_read), file_bytes);
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(header.token_count));
  std::vector<unsigned char> chunk(kChunkTokens * header.token_width);
  for (std::size_t first = 0; first < tokens.size(); first += kChunkTokens) {
    const std::size_t count = std::min(kChunkTokens, tokens.size() - first);
    read_exactly(in, path, chunk.data(), count * header.token_width,
                 "token " + std::to_string(first));
    decode_tokens(path, header, chunk.data(), count, first, tokens.data() + first);
  }
  return TokenFile(path, header.vocab_size, std::move(tokens));
}

TokenFile TokenFile::from_bytes(const fs::path& path, std::span<const unsigned char> bytes) {
  const TokenFileHeader header = parse_token_file_header(path, bytes, bytes.size());
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(header.token_count));
  decode_tokens(path, header, bytes.data() + kTokenFileHeaderBytes, tokens.size(), 0,
                tokens.data());
  return TokenFile(path, header.vocab_size, std::move(tokens));
}

std::int32_t TokenFile::token(std::int64_t i) const {
  ZT_CHECK(i >= 0 && i < size(), "token index " + std::to_string(i) + " outside " + path_.string());
  return tokens_[static_cast<std::size_t>(i)];
}

void TokenFile::read(std::int64_t first, std::span<std::int32_t> out) const {
  ZT_CHECK(first >= 0 && first + static_cast<std::int64_t>(out.size()) <= size(),
           "token range outside " + path_.string());
  std::copy_n(tokens_.begin() + first, out.size(), out.begin());
}

}  // namespace zt::data
