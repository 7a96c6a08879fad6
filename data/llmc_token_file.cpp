// Validating llm.c token file headers (Note [llm.c token file layout] in llmc_token_file.h).
#include "data/llmc_token_file.h"

#include <string>

#include "core/error.h"
#include "data/token_file_format.h"

namespace zt::data {
namespace {

using token_format::get_le;
using token_format::name;

constexpr const char* kHowToMake =
    "write it with llm.c's dev/data scripts (e.g. fineweb.py), or set data.format";

std::uint32_t header_word(std::span<const unsigned char> bytes, std::size_t index) {
  return static_cast<std::uint32_t>(get_le(bytes.data() + 4 * index, 4));
}

}  // namespace

bool has_llmc_magic(std::span<const unsigned char> first_bytes) {
  if (first_bytes.size() < 4) return false;
  const std::uint32_t magic = header_word(first_bytes, 0);
  return magic == kLlmcMagicU16 || magic == kLlmcMagicU32;
}

LlmcHeader parse_llmc_header(const std::filesystem::path& path,
                             std::span<const unsigned char> first_bytes, std::uint64_t file_bytes) {
  if (file_bytes < kLlmcHeaderBytes || first_bytes.size() < kLlmcHeaderBytes) {
    throw FormatError(name(path) + ": not an llm.c token file: its header needs " +
                      std::to_string(kLlmcHeaderBytes) + " bytes, the file holds " +
                      std::to_string(file_bytes) + "; " + kHowToMake);
  }
  const std::uint32_t magic = header_word(first_bytes, 0);
  LlmcHeader header;
  header.version = header_word(first_bytes, 1);
  std::uint32_t expected_version = 0;
  if (magic == kLlmcMagicU16) {
    header.token_bytes = 2;
    expected_version = 1;
  } else if (magic == kLlmcMagicU32) {
    header.token_bytes = 4;
    expected_version = 7;
  } else {
    throw FormatError(name(path) + ": not an llm.c token file (magic " + std::to_string(magic) +
                      ", expected " + std::to_string(kLlmcMagicU16) + " or " +
                      std::to_string(kLlmcMagicU32) + "); " + kHowToMake);
  }
  if (header.version != expected_version) {
    throw FormatError(name(path) + ": llm.c magic " + std::to_string(magic) +
                      " goes with version " + std::to_string(expected_version) +
                      ", the header says version " + std::to_string(header.version) +
                      "; the file is corrupt or of a newer llm.c");
  }
  header.token_count = header_word(first_bytes, 2);
  const std::uint64_t expected_bytes = kLlmcHeaderBytes + header.token_count * header.token_bytes;
  if (file_bytes != expected_bytes) {
    throw FormatError(name(path) + ": the llm.c header says " + std::to_string(header.token_count) +
                      " tokens of " + std::to_string(header.token_bytes) +
                      " bytes, so the file should be " + std::to_string(expected_bytes) +
                      " bytes, but it is " + std::to_string(file_bytes) +
                      " bytes; the file is truncated or corrupt");
  }
  return header;
}

}  // namespace zt::data
