// The byte-level pieces of the token-file format shared by the reader and the writer:
// magic, widths and little-endian integers (Note [Token file layout] in token_file.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace zt::data::token_format {

inline constexpr std::array<unsigned char, 8> kMagic = {'Z', 'T', 'T', 'O', 'K', 0, 0, 0};
inline constexpr std::uint32_t kMaxVocabSize = 0x80000000u;

// The smallest width that holds every token in [0, vocab_size).
inline std::uint32_t width_for(std::uint32_t vocab_size) {
  if (vocab_size <= 0x100u) return 1;
  if (vocab_size <= 0x10000u) return 2;
  return 4;
}

inline void put_le(unsigned char* dst, std::uint64_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) dst[i] = static_cast<unsigned char>(value >> (8 * i));
}

inline std::uint64_t get_le(const unsigned char* src, std::size_t bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i) value |= static_cast<std::uint64_t>(src[i]) << (8 * i);
  return value;
}

inline std::string name(const std::filesystem::path& path) {
  return "token file '" + path.string() + "'";
}

inline std::string outside_vocabulary(std::int64_t token, std::uint64_t position,
                                      std::uint32_t vocab) {
  return "token " + std::to_string(token) + " at position " + std::to_string(position) +
         " is outside the vocabulary of " + std::to_string(vocab);
}

}  // namespace zt::data::token_format
