// Writers of other projects' token files for tests: llm.c's (a 256 x int32 header, then
// uint16 or uint32 tokens) and nanoGPT's (headerless uint16), byte for byte as they write them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

namespace zt::testing {

inline constexpr std::uint32_t kLlmcTestHeaderBytes = 1024;

// llm.c's dev/data/data_common.py layout: header[0] magic, [1] version, [2] count (the
// real count unless `claimed_count` >= 0), then each token in `token_bytes` bytes.
inline void write_llmc_file(const std::filesystem::path& path,
                            const std::vector<std::uint32_t>& tokens, std::uint32_t magic,
                            std::uint32_t version, std::uint32_t token_bytes,
                            std::int64_t claimed_count = -1) {
  std::vector<unsigned char> bytes(kLlmcTestHeaderBytes + tokens.size() * token_bytes);
  const auto put = [&](std::size_t at, std::uint64_t value, std::size_t width) {
    for (std::size_t i = 0; i < width; ++i)
      bytes[at + i] = static_cast<unsigned char>(value >> (8 * i));
  };
  put(0, magic, 4);
  put(4, version, 4);
  put(8, claimed_count < 0 ? tokens.size() : static_cast<std::uint64_t>(claimed_count), 4);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    put(kLlmcTestHeaderBytes + i * token_bytes, tokens[i], token_bytes);
  }
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

// nanoGPT's prepare.py layout: the tokens as little-endian uint16, nothing else.
inline void write_nanogpt_file(const std::filesystem::path& path,
                               const std::vector<std::uint32_t>& tokens) {
  std::vector<unsigned char> bytes(tokens.size() * 2);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    bytes[2 * i] = static_cast<unsigned char>(tokens[i]);
    bytes[2 * i + 1] = static_cast<unsigned char>(tokens[i] >> 8);
  }
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

}  // namespace zt::testing
