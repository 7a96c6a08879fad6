// Fuzzes token-file validation: any bytes are either a valid token file, whose header
// agrees with its size and whose tokens are all inside the vocabulary, or a FormatError.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "core/error.h"
#include "data/token_file.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const unsigned char> bytes(data, size);
  // The header alone, against a claimed file size taken from the input, must never crash.
  if (size >= 8) {
    std::uint64_t claimed = 0;
    for (std::size_t i = 0; i < 8; ++i) claimed |= static_cast<std::uint64_t>(data[i]) << (8 * i);
    zt::fuzz::accepts<zt::FormatError>(
        [&] { zt::data::parse_token_file_header("fuzz.bin", bytes.subspan(8), claimed); });
  }
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
