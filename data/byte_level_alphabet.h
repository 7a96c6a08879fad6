// GPT-2's byte-level alphabet: each of the 256 byte values stands for one printable Unicode
// character, so a BPE vocabulary over bytes can be written as text (vocab.json, merges).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zt::data {

// The UTF-8 of the character that stands for `byte` (Note [Byte-level alphabet]).
const std::string& byte_level_symbol(unsigned char byte);

// The bytes a string of byte-level characters stands for; nullopt when it holds a
// character outside the alphabet (or is not UTF-8).
std::optional<std::string> byte_level_bytes(std::string_view symbols);

// The byte-level characters for `bytes` (the inverse of byte_level_bytes).
std::string byte_level_symbols(std::string_view bytes);

}  // namespace zt::data
