// llm.c's token file header (karpathy/llm.c, dev/data/data_common.py): 256 little-endian
// int32 values, then the tokens. Only the header is parsed here; tokens are read per window.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>

namespace zt::data {

// Note [llm.c token file layout] (all integers little-endian int32)
//   header[0]  magic: 20240520 (tokens are uint16) or 20240801 (tokens are uint32)
//   header[1]  version: 1 with magic 20240520, 7 with magic 20240801
//   header[2]  token count N
//   header[3..255] unused
//   offset 1024: N tokens of 2 or 4 bytes; the file is exactly 1024 + N * token bytes.
// The header carries no vocabulary: ids are checked against model.vocab_size when read.
inline constexpr std::size_t kLlmcHeaderBytes = 1024;
inline constexpr std::uint32_t kLlmcMagicU16 = 20240520;
inline constexpr std::uint32_t kLlmcMagicU32 = 20240801;

struct LlmcHeader {
  std::uint32_t version = 0;
  std::uint32_t token_bytes = 0;  // 2 or 4
  std::uint64_t token_count = 0;
};

// True when `first_bytes` starts with one of llm.c's two magics (what data.format = "auto"
// goes by).
bool has_llmc_magic(std::span<const unsigned char> first_bytes);

// Validates the header of an llm.c token file of `file_bytes` bytes whose first
// min(file_bytes, kLlmcHeaderBytes) bytes are `first_bytes`: magic, the version that goes
// with it, and a size of exactly 1024 + count * token bytes. Throws FormatError naming
// `path`, and for a size mismatch the header's count and the actual size.
LlmcHeader parse_llmc_header(const std::filesystem::path& path,
                             std::span<const unsigned char> first_bytes, std::uint64_t file_bytes);

}  // namespace zt::data
