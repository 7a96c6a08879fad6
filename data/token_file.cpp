// Writing and validating token files with explicit little-endian encoding, so a file means
// the same on every host (see Note [Token file layout] in token_file.h).
#include "data/token_file.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <fstream>
#include <string>
#include <system_error>

#include "core/error.h"

namespace zt::data {
namespace {

namespace fs = std::filesystem;

constexpr std::array<unsigned char, 8> kMagic = {'Z', 'T', 'T', 'O', 'K', 0, 0, 0};
constexpr std::size_t kChunkTokens = std::size_t{1} << 16;
constexpr const char* kHowToMake = "create one with `zerotrain prepare-data INPUT OUT.bin`";

struct Header {
  std::uint32_t version = 0;
  std::uint32_t vocab_size = 0;
  std::uint64_t token_count = 0;
  std::uint32_t token_width = 0;
};

std::string name(const fs::path& path) { return "token file '" + path.string() + "'"; }

std::string errno_reason() { return std::generic_category().message(errno); }

// The smallest width that holds every token in [0, vocab_size).
std::uint32_t width_for(std::uint32_t vocab_size) {
  if (vocab_size <= 0x100u) return 1;
  if (vocab_size <= 0x10000u) return 2;
  return 4;
}

void put_le(unsigned char* dst, std::uint64_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) dst[i] = static_cast<unsigned char>(value >> (8 * i));
}

std::uint64_t get_le(const unsigned char* src, std::size_t bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i) value |= static_cast<std::uint64_t>(src[i]) << (8 * i);
  return value;
}

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

std::string outside_vocabulary(std::int64_t token, std::uint64_t position, std::uint32_t vocab) {
  return "token " + std::to_string(token) + " at position " + std::to_string(position) +
         " is outside the vocabulary of " + std::to_string(vocab);
}

// Header bytes -> validated fields; `file_bytes` is the whole file's size.
Header parse_header(const fs::path& path, const unsigned char* bytes, std::uintmax_t file_bytes) {
  const std::size_t have = static_cast<std::size_t>(std::min<std::uintmax_t>(file_bytes, 8));
  if (!std::equal(bytes, bytes + have, kMagic.begin())) {
    throw FormatError(name(path) + ": not a zerotrain token file (magic " +
                      describe_magic(bytes, have) + ", expected \"ZTTOK\\x00\\x00\\x00\"); " +
                      kHowToMake);
  }
  if (file_bytes < kTokenFileHeaderBytes) {
    throw FormatError(name(path) + ": truncated: the header needs " +
                      std::to_string(kTokenFileHeaderBytes) + " bytes, file holds " +
                      std::to_string(file_bytes) + "; re-create it");
  }
  Header header;
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
  if (header.vocab_size == 0 || header.vocab_size > 0x80000000u) {
    throw FormatError(name(path) + ": vocabulary size " + std::to_string(header.vocab_size) +
                      " is outside [1, 2^31]; re-create the file");
  }
  if (header.token_width != 1 && header.token_width != 2 && header.token_width != 4) {
    throw FormatError(name(path) + ": token width " + std::to_string(header.token_width) +
                      " bytes is not 1, 2 or 4; re-create the file");
  }
  const std::uintmax_t held = (file_bytes - kTokenFileHeaderBytes) / header.token_width;
  if (held < header.token_count) {
    throw FormatError(name(path) + ": truncated: header says " +
                      std::to_string(header.token_count) + " tokens, file holds " +
                      std::to_string(held) + "; re-create it");
  }
  const std::uintmax_t expected_bytes =
      kTokenFileHeaderBytes + header.token_count * header.token_width;
  if (file_bytes != expected_bytes) {
    throw FormatError(name(path) + ": " + std::to_string(file_bytes - expected_bytes) +
                      " bytes follow the " + std::to_string(header.token_count) +
                      " tokens its header announces; the file is corrupt, re-create it");
  }
  return header;
}

// Reads `header.token_count` tokens after the header, checking each against the vocabulary.
std::vector<std::int32_t> read_tokens(const fs::path& path, std::ifstream& in,
                                      const Header& header) {
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(header.token_count));
  std::vector<unsigned char> chunk(kChunkTokens * header.token_width);
  for (std::size_t first = 0; first < tokens.size(); first += kChunkTokens) {
    const std::size_t count = std::min(kChunkTokens, tokens.size() - first);
    if (!in.read(reinterpret_cast<char*>(chunk.data()),
                 static_cast<std::streamsize>(count * header.token_width))) {
      throw IoError("cannot read " + name(path) + " at token " + std::to_string(first) + ": " +
                    errno_reason());
    }
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t value = get_le(chunk.data() + i * header.token_width, header.token_width);
      if (value >= header.vocab_size) {
        throw FormatError(
            name(path) + ": " +
            outside_vocabulary(static_cast<std::int64_t>(value), first + i, header.vocab_size) +
            "; the file is corrupt or was written with another vocabulary");
      }
      tokens[first + i] = static_cast<std::int32_t>(value);
    }
  }
  return tokens;
}

void write_payload(std::ofstream& out, std::span<const std::int32_t> tokens,
                   std::uint32_t vocab_size) {
  std::array<unsigned char, kTokenFileHeaderBytes> header{};
  std::copy(kMagic.begin(), kMagic.end(), header.begin());
  const std::uint32_t width = width_for(vocab_size);
  put_le(header.data() + 8, kTokenFileVersion, 4);
  put_le(header.data() + 12, vocab_size, 4);
  put_le(header.data() + 16, tokens.size(), 8);
  put_le(header.data() + 24, width, 4);
  out.write(reinterpret_cast<const char*>(header.data()), header.size());
  std::vector<unsigned char> chunk(kChunkTokens * width);
  for (std::size_t first = 0; first < tokens.size() && out; first += kChunkTokens) {
    const std::size_t count = std::min(kChunkTokens, tokens.size() - first);
    for (std::size_t i = 0; i < count; ++i) {
      put_le(chunk.data() + i * width, static_cast<std::uint32_t>(tokens[first + i]), width);
    }
    out.write(reinterpret_cast<const char*>(chunk.data()),
              static_cast<std::streamsize>(count * width));
  }
}

}  // namespace

void write_token_file(const fs::path& path, std::span<const std::int32_t> tokens,
                      std::uint32_t vocab_size) {
  if (vocab_size == 0 || vocab_size > 0x80000000u) {
    throw FormatError("cannot write " + name(path) + ": vocabulary size " +
                      std::to_string(vocab_size) + " is outside [1, 2^31]");
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || static_cast<std::uint32_t>(tokens[i]) >= vocab_size) {
      throw FormatError("cannot write " + name(path) + ": " +
                        outside_vocabulary(tokens[i], i, vocab_size));
    }
  }
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw IoError("cannot create '" + tmp.string() + "' for " + name(path) + ": " +
                    errno_reason() + "; check that the directory exists and is writable");
    }
    write_payload(out, tokens, vocab_size);
    out.close();
    if (!out) {
      const std::string reason = errno_reason();
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw IoError("cannot write '" + tmp.string() + "': " + reason + "; is the disk full?");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw IoError("cannot rename '" + tmp.string() + "' to '" + path.string() +
                  "': " + ec.message());
  }
}

TokenFile TokenFile::open(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    throw IoError("cannot open " + name(path) + ": " +
                  (ec ? ec.message() : std::string("no such file")) + "; " + kHowToMake);
  }
  if (fs::is_directory(status)) {
    throw IoError("cannot open " + name(path) + ": it is a directory; pass the .bin file");
  }
  const std::uintmax_t file_bytes = fs::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) {
    throw IoError("cannot read " + name(path) + ": " + (ec ? ec.message() : errno_reason()));
  }
  if (file_bytes == 0) {
    throw FormatError(name(path) + ": the file is empty, not a zerotrain token file; " +
                      kHowToMake);
  }
  std::array<unsigned char, kTokenFileHeaderBytes> header_bytes{};
  const auto header_read = std::min<std::uintmax_t>(file_bytes, kTokenFileHeaderBytes);
  if (!in.read(reinterpret_cast<char*>(header_bytes.data()),
               static_cast<std::streamsize>(header_read))) {
    throw IoError("cannot read the header of " + name(path) + ": " + errno_reason());
  }
  const Header header = parse_header(path, header_bytes.data(), file_bytes);
  std::vector<std::int32_t> tokens = read_tokens(path, in, header);
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
