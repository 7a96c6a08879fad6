// Writers of other projects' token files for tests: llm.c's (a 256 x int32 header, then
// uint16 or uint32 tokens) and nanoGPT's (headerless uint16), byte for byte as they write them.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
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

// The tokens of an llm.c file of uint16 tokens (version 1) as prepare-data writes it; the
// header's magic, version and count are checked (empty, with a failure, when it is not one).
inline std::vector<std::int32_t> read_llmc_tokens(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::int32_t header[3] = {};
  if (bytes.size() < kLlmcTestHeaderBytes) {
    ADD_FAILURE() << path << " is shorter than llm.c's header";
    return {};
  }
  std::memcpy(header, bytes.data(), sizeof(header));
  EXPECT_EQ(header[0], 20240520) << path;
  EXPECT_EQ(header[1], 1) << path;
  EXPECT_EQ(bytes.size(), kLlmcTestHeaderBytes + 2 * static_cast<std::size_t>(header[2])) << path;
  std::vector<std::int32_t> tokens;
  for (std::size_t at = kLlmcTestHeaderBytes; at + 2 <= bytes.size(); at += 2) {
    std::uint16_t token = 0;
    std::memcpy(&token, bytes.data() + at, 2);
    tokens.push_back(token);
  }
  return tokens;
}

}  // namespace zt::testing
