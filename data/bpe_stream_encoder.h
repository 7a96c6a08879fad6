// BpeStreamEncoder: encodes a text that arrives in chunks (a file read piece by piece) to the
// same ids as encoding it whole, holding back only the text whose added tokens or pre-tokens
// more text could still change (Note [Encoding a stream]).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/bpe_tokenizer.h"

namespace zt::data {

class BpeStreamEncoder {
 public:
  // `source` names the text in errors (the input file's path).
  BpeStreamEncoder(BpeTokenizer& tokenizer, std::string source);

  // Appends the ids of the text so far that later bytes cannot change. Throws FormatError
  // naming the byte offset of a byte that is not UTF-8, or of a pre-token longer than
  // kMaxPendingBytes (a run of letters or spaces that long would not fit in bounded memory).
  void feed(std::string_view bytes, std::vector<std::int32_t>& ids);
  // Appends the ids of the rest; the text must not end inside a UTF-8 character.
  void finish(std::vector<std::int32_t>& ids);

  static constexpr std::size_t kMaxPendingBytes = std::size_t{64} << 20;

 private:
  void encode_pending(bool at_end, std::vector<std::int32_t>& ids);
  // Encodes the pre-tokens of ordinary text `piece` that are final (all when `closed`, the
  // piece then ending its segment); returns how many of its bytes they cover.
  std::size_t encode_ordinary(std::string_view piece, bool closed, std::vector<std::int32_t>& ids);

  BpeTokenizer& tokenizer_;
  std::string source_;
  std::string pending_;               // text not yet encoded; starts at a pre-token boundary
  std::uint64_t pending_offset_ = 0;  // byte offset of pending_[0] in the input
  std::size_t checked_bytes_ = 0;     // prefix of pending_ known to be whole UTF-8 characters
  // Whether pending_ starts inside ordinary text whose start was encoded already (so
  // add_prefix_space's space was decided there).
  bool inside_segment_ = false;
  std::string prefixed_;  // a piece with add_prefix_space's space
  std::vector<std::string_view> pieces_;
  std::vector<TextSegment> segments_;
};

}  // namespace zt::data
