// Fuzzes token-file validation: any bytes are either a valid token file, whose header
// agrees with its size and whose tokens are all inside the vocabulary, or a FormatError;
// and as an llm.c file either a header whose magic, version and count agree with the size,
// or a FormatError.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "core/error.h"
#include "data/llmc_token_file.h"
#include "data/token_file.h"
#include "fuzz_check.h"

namespace {

// The llm.c header parser, on the input as a whole file and on its header against a size
// taken from its first 8 bytes.
void check_llmc_header(std::span<const unsigned char> bytes) {
  zt::data::LlmcHeader header;
  const bool whole = zt::fuzz::accepts<zt::FormatError>(
      [&] { header = zt::data::parse_llmc_header("fuzz.bin", bytes, bytes.size()); });
  if (whole) {
    if (zt::data::kLlmcHeaderBytes + header.token_count * header.token_bytes != bytes.size()) {
      zt::fuzz::fail("an llm.c file whose size disagrees with its header was accepted");
    }
    const bool v1 = header.token_bytes == 2 && header.version == 1;
    const bool v7 = header.token_bytes == 4 && header.version == 7;
    if (!(v1 || v7) || !zt::data::has_llmc_magic(bytes)) {
      zt::fuzz::fail("an llm.c header with a wrong magic or version was accepted");
    }
  }
  if (bytes.size() >= 8) {
    std::uint64_t claimed = 0;
    for (std::size_t i = 0; i < 8; ++i) claimed |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
    zt::fuzz::accepts<zt::FormatError>(
        [&] { zt::data::parse_llmc_header("fuzz.bin", bytes.subspan(8), claimed); });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const unsigned char> bytes(data, size);
  // The header alone, against a claimed file size taken from the input, must never crash.
  if (size >= 8) {
    std::uint64_t claimed = 0;
    for (std::size_t i = 0; i < 8; ++i) claimed |= static_cast<std::uint64_t>(data[i]) << (8 * i);
    zt::fuzz::accepts<zt::FormatError>(
        [&] { zt::data::parse_token_file_header("fuzz.bin", bytes.subspan(8), claimed); });
  }
  check_llmc_header(bytes);
  std::optional<zt::data::TokenFile> file;
  if (!zt::fuzz::accepts<zt::FormatError>(
          [&] { file.emplace(zt::data::TokenFile::from_bytes("fuzz.bin", bytes)); })) {
    return 0;
  }
  const auto header = zt::data::parse_token_file_header("fuzz.bin", bytes, size);
  if (header.token_count != static_cast<std::uint64_t>(file->size())) {
    zt::fuzz::fail("token count differs from the header");
  }
  if (zt::data::kTokenFileHeaderBytes + header.token_count * header.token_width != size) {
    zt::fuzz::fail("a file with trailing or missing bytes was accepted");
  }
  for (const std::int32_t token : file->tokens()) {
    if (token < 0 || static_cast<std::uint32_t>(token) >= file->vocab_size()) {
      zt::fuzz::fail("a token outside the vocabulary was accepted");
    }
  }
  return 0;
}
