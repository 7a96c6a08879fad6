// GPT-2's pre-tokenizer: splits UTF-8 text into the pieces BPE merges within (words with
// their leading space, digit runs, punctuation runs, whitespace), with GPT-2's regular
// expression run by PCRE2 with Unicode character properties.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace zt::data {

// The pattern of GPT-2's encoder.py, which Hugging Face's ByteLevel pre-tokenizer also uses.
inline constexpr std::string_view kGpt2PreTokenizerPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class Gpt2PreTokenizer {
 public:
  Gpt2PreTokenizer();  // compiles the pattern (JIT when PCRE2 has it)
  ~Gpt2PreTokenizer();
  Gpt2PreTokenizer(Gpt2PreTokenizer&&) noexcept;
  Gpt2PreTokenizer& operator=(Gpt2PreTokenizer&&) noexcept;

  // Replaces `pieces` with the pre-tokens of `text`, views into it, in order; together they
  // cover the text. `text` must be valid UTF-8 (see utf8_complete_prefix). Not safe to call
  // from two threads at once (it reuses one match buffer).
  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

// The length of the longest prefix of `bytes` made of whole UTF-8 characters, looking from
// `from` (a character boundary): it stops before a character cut off at the end, which more
// bytes may complete. Throws FormatError naming `source` and the byte offset (`base_offset`
// + position) of a byte that cannot be UTF-8 (overlong forms and surrogates included).
std::size_t utf8_complete_prefix(std::string_view bytes, std::size_t from, std::string_view source,
                                 std::uint64_t base_offset);

}  // namespace zt::data
