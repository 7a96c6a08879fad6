// Streaming byte-level BPE: chunks are cut only where the added tokens and pre-tokens before
// the cut are final, so the ids equal those of the whole text.
#include "data/bpe_stream_encoder.h"

#include <algorithm>

#include "core/error.h"

namespace zt::data {
namespace {

// Note [Encoding a stream]
// Encoding cuts the text at added tokens ("<|endoftext|>", Note [Added tokens in text]),
// then splits each piece between them into pre-tokens. Both are decided from the text at
// and after a position, with a bounded look ahead, so a prefix of what has arrived is final:
// - Added tokens: whether one starts at position p (and which, in either of the two passes)
//   depends only on the bytes in [p, p + 2L - 1), L the longest added token: its own
//   [p, p + L), and where a first-pass token starting before p + L ends. So the cut at an
//   added token that starts at p with p + 2L - 1 <= what has arrived is final, and so is
//   the ordinary text before it; text from size - 2L + 2 on may still become a token.
// - Pre-tokens: GPT-2's pattern decides a pre-token from the text at and after its start,
//   never before, and looks at most three characters past the start (the contractions 're,
//   've, 'll) or one past the end (\s+(?!\S)); a run of letters, digits, punctuation or
//   spaces that reaches the end of the text so far may grow. So a pre-token that ends at
//   least three characters before the end of the ordinary text known so far is final:
//   kLookaheadBytes (three characters of up to four bytes) is a safe margin.
// Everything from the first piece that is not final is held back and matched again with the
// next chunk. add_prefix_space's space goes before each piece of ordinary text, as Hugging
// Face's ByteLevel adds it to each piece between added tokens; a piece encoded in parts
// gets it once, at its start.
constexpr std::size_t kLookaheadBytes = 3 * 4;

}  // namespace

BpeStreamEncoder::BpeStreamEncoder(BpeTokenizer& tokenizer, std::string source)
    : tokenizer_(tokenizer), source_(std::move(source)) {}

void BpeStreamEncoder::feed(std::string_view bytes, std::vector<std::int32_t>& ids) {
  if (bytes.empty()) return;
  pending_.append(bytes);
  encode_pending(false, ids);
}

void BpeStreamEncoder::finish(std::vector<std::int32_t>& ids) { encode_pending(true, ids); }

std::size_t BpeStreamEncoder::encode_ordinary(std::string_view piece, bool closed,
                                              std::vector<std::int32_t>& ids) {
  std::size_t added_space = 0;
  if (!inside_segment_ && tokenizer_.add_prefix_space() && !piece.empty() && piece.front() != ' ') {
    prefixed_.assign(1, ' ');
    prefixed_.append(piece);
    piece = prefixed_;
    added_space = 1;
  }
  tokenizer_.pre_tokenizer().split(piece, pieces_);
  std::size_t consumed = 0;
  for (const std::string_view pre_token : pieces_) {
    const std::size_t end = consumed + pre_token.size();
    if (!closed && end + kLookaheadBytes > piece.size()) break;
    tokenizer_.encode_pre_token(pre_token, ids);
    consumed = end;
  }
  if (consumed == 0) return 0;
  inside_segment_ = !closed;
  return consumed - added_space;
}

void BpeStreamEncoder::encode_pending(bool at_end, std::vector<std::int32_t>& ids) {
  checked_bytes_ = utf8_complete_prefix(pending_, checked_bytes_, source_, pending_offset_);
  if (at_end && checked_bytes_ != pending_.size()) {
    throw FormatError(source_ + ": ends inside a UTF-8 character at byte " +
                      std::to_string(pending_offset_ + checked_bytes_) +
                      "; a BPE tokenizer reads UTF-8 text");
  }
  const std::string_view text(pending_.data(), checked_bytes_);
  // Decisions at positions before `final_end` are final (Note [Encoding a stream]).
  const std::size_t longest = tokenizer_.added_tokens().longest_bytes();
  const std::size_t held = longest == 0 ? 0 : 2 * longest - 2;
  const std::size_t final_end = at_end ? text.size() : text.size() - std::min(text.size(), held);
  tokenizer_.added_tokens().split(text, segments_);
  std::size_t consumed = 0;
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    const TextSegment& segment = segments_[i];
    if (segment.id >= 0) {
      if (segment.begin >= final_end) break;
      ids.push_back(segment.id);
      consumed = segment.end;
      inside_segment_ = false;
      continue;
    }
    const bool closed = at_end || (i + 1 < segments_.size() && segments_[i + 1].begin < final_end);
    const std::size_t end = closed ? segment.end : std::min(segment.end, final_end);
    if (end <= segment.begin) break;
    const std::size_t encoded =
        encode_ordinary(text.substr(segment.begin, end - segment.begin), closed, ids);
    consumed = segment.begin + encoded;
    if (!closed) break;
  }
  if (!at_end && pending_.size() - consumed > kMaxPendingBytes) {
    throw FormatError(source_ +
                      ": a single pre-token (a run of letters, digits, punctuation "
                      "or whitespace) starting at byte " +
                      std::to_string(pending_offset_ + consumed) + " is longer than " +
                      std::to_string(kMaxPendingBytes >> 20) +
                      " MiB; prepare-data encodes in bounded memory and cannot hold it");
  }
  pending_.erase(0, consumed);
  pending_offset_ += consumed;
  checked_bytes_ -= consumed;
}

}  // namespace zt::data
