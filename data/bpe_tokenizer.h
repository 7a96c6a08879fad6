// BpeTokenizer: byte-level BPE as GPT-2 defines it, read from a Hugging Face tokenizer.json
// or from GPT-2's vocab.json + merges.txt. Encodes UTF-8 text to ids (pre-tokens by GPT-2's
// pattern, bytes mapped to GPT-2's alphabet, merges applied by rank) and decodes ids back.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/added_tokens.h"
#include "data/gpt2_pre_tokenizer.h"

namespace zt::data {

// What a tokenizer file holds, before the merge table is built (bpe_tokenizer_files.cpp).
struct BpeModelFile {
  std::string source;  // the file(s) it came from, for messages
  std::vector<std::pair<std::string, std::int64_t>> vocab;  // byte-level token -> id
  std::vector<std::pair<std::string, std::string>> merges;  // in rank order
  std::vector<std::string> merge_positions;                 // "file:line" of each
  std::vector<AddedToken> added_tokens;
  bool add_prefix_space = false;
  bool ignore_merges = false;
};

class BpeTokenizer {
 public:
  // Reads `path`: a tokenizer.json (an object with "model"), or a GPT-2 vocab.json, whose
  // merges are `merges_path` or, when that is empty, merges.txt beside it. Throws
  // FormatError naming the file and field for what it cannot use: a model other than BPE, a
  // pre-tokenizer other than ByteLevel with GPT-2's pattern, a normalizer, a merge naming a
  // token the vocabulary lacks (Note [Supported tokenizers] in bpe_tokenizer_files.cpp).
  static BpeTokenizer load(const std::filesystem::path& path,
                           const std::filesystem::path& merges_path = {});
  explicit BpeTokenizer(BpeModelFile file);

  const std::string& source() const { return source_; }
  // One more than the largest id (vocabulary and added tokens).
  std::uint32_t vocab_size() const { return vocab_size_; }
  // Hugging Face's ByteLevel add_prefix_space: a space goes before text that starts without.
  bool add_prefix_space() const { return add_prefix_space_; }
  const Gpt2PreTokenizer& pre_tokenizer() const { return pre_tokenizer_; }

  // The added (special) tokens, which encode finds in text (Note [Added tokens in text]).
  const AddedTokens& added_tokens() const { return added_tokens_; }
  // The id of the added token whose text is `content` ("<|endoftext|>"), if there is one.
  std::optional<std::int32_t> added_token_id(std::string_view content) const;

  // Appends the ids of `text` (valid UTF-8; FormatError otherwise), as Hugging Face's
  // encode(text, add_special_tokens=False) gives them: an added token written in the text
  // ("<|endoftext|>") is that token's id, as in Hugging Face (tiktoken's encode with
  // allowed_special="all"); the text between is encoded as ordinary text.
  void encode(std::string_view text, std::vector<std::int32_t>& ids);
  // Appends the ids of ordinary text (no added tokens are looked for): pre-tokens, each
  // encoded with BPE, after add_prefix_space's space.
  void encode_ordinary(std::string_view text, std::vector<std::int32_t>& ids);
  // Appends the ids of one pre-token (a piece from pre_tokenizer().split).
  void encode_pre_token(std::string_view piece, std::vector<std::int32_t>& ids);

  // The id of the token written `text`: an added (special) token, or a vocabulary token whose
  // byte-level spelling is `text`'s (GPT-2's vocab.json holds <|endoftext|> among its
  // tokens); nullopt when there is none.
  std::optional<std::int32_t> token_id(std::string_view text) const;

  // The bytes the ids stand for (usually UTF-8 text; a cut through a character is kept as
  // its bytes). Throws FormatError naming the position of an id outside the vocabulary.
  std::string decode(std::span<const std::int32_t> ids) const;

 private:
  struct Merge {
    std::int32_t rank;
    std::int32_t merged_id;
  };
  static std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
           static_cast<std::uint32_t>(right);
  }
  void merge_symbols(std::vector<std::int32_t>& symbols) const;

  std::string source_;
  std::uint32_t vocab_size_ = 0;
  bool add_prefix_space_ = false;
  bool ignore_merges_ = false;
  Gpt2PreTokenizer pre_tokenizer_;
  AddedTokens added_tokens_;
  std::unordered_map<std::string, std::int32_t> added_id_of_;  // added token text -> id
  std::unordered_map<std::string, std::int32_t> id_of_;        // byte-level token -> id
  std::vector<std::string> bytes_of_;                          // id -> bytes ("" when unused)
  std::vector<bool> used_;                                     // id -> whether it is defined
  std::array<std::int32_t, 256> byte_id_{};                    // the one-byte tokens
  std::unordered_map<std::uint64_t, Merge> merges_;            // (left, right) -> rank, result
  // Pre-token -> ids: text repeats the same words, and BPE on a word costs far more than a
  // lookup. Bounded: cleared when it reaches kCacheEntries. Confined to the encoding thread.
  std::unordered_map<std::string, std::vector<std::int32_t>> cache_;
  std::vector<std::string_view> pieces_;  // reused by encode
  std::vector<TextSegment> segments_;     // reused by encode
};

}  // namespace zt::data
