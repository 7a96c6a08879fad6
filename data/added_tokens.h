// AddedTokens: finds a tokenizer's added (special) tokens, such as <|endoftext|>, written in
// text, as Hugging Face's tokenizers does before it pre-tokenizes (Note [Added tokens in text]).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace zt::data {

// One entry of tokenizer.json's added_tokens.
struct AddedToken {
  std::string content;
  std::int64_t id = 0;
  bool normalized = false;  // matched after normalization (here the same text), so second
};

// A piece of text: ordinary text [begin, end) when id < 0, else the added token `id`.
struct TextSegment {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::int32_t id = -1;
};

class AddedTokens {
 public:
  AddedTokens() = default;
  explicit AddedTokens(const std::vector<AddedToken>& tokens);

  bool empty() const { return longest_bytes_ == 0; }
  // The length of the longest token's text (0 when there are none).
  std::size_t longest_bytes() const { return longest_bytes_; }
  // Cuts `text` into ordinary text and added tokens, in order, covering it; ordinary pieces
  // are never empty.
  void split(std::string_view text, std::vector<TextSegment>& segments) const;

 private:
  // Tokens of one matching pass, by first byte, longest first (leftmost-longest match).
  struct Pass {
    std::array<std::vector<std::pair<std::string, std::int32_t>>, 256> by_first_byte;
    bool empty = true;
  };
  void split_pass(std::string_view text, std::size_t begin, std::size_t end, int pass,
                  std::vector<TextSegment>& segments) const;

  std::array<Pass, 2> passes_;  // [0] tokens matched on the raw text, [1] the normalized ones
  std::size_t longest_bytes_ = 0;
};

}  // namespace zt::data
