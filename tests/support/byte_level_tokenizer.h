// A minimal Hugging Face tokenizer.json for tests that need data.tokenizer: the 256 byte
// tokens of GPT-2's byte-level alphabet (ids 0..255 in byte order), no merges, and the given
// special tokens as added_tokens.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "data/byte_level_alphabet.h"

namespace zt::testing {

inline std::string json_text(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

inline void write_byte_level_tokenizer(
    const std::filesystem::path& path,
    const std::vector<std::pair<std::string, std::int64_t>>& special_tokens) {
  std::string vocab;
  for (unsigned b = 0; b < 256; ++b) {
    vocab += (b ? ", " : "") + json_text(data::byte_level_symbol(static_cast<unsigned char>(b))) +
             ": " + std::to_string(b);
  }
  std::string added;
  for (const auto& [text, id] : special_tokens) {
    added += std::string(added.empty() ? "" : ", ") + "{\"id\": " + std::to_string(id) +
             ", \"content\": " + json_text(text) + ", \"special\": true}";
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      << R"({"version": "1.0", "added_tokens": [)" << added
      << R"(], "normalizer": null, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": )"
      << R"(false}, "post_processor": null, "decoder": {"type": "ByteLevel"}, "model": {"type": )"
      << R"("BPE", "dropout": null, "vocab": {)" << vocab << R"(}, "merges": []}})"
      << "\n";
}

}  // namespace zt::testing
