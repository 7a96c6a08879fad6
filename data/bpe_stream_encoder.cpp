// Streaming byte-level BPE: chunks are cut only where the pre-tokens before the cut are
// final, so the ids equal those of the whole text.
#include "data/bpe_stream_encoder.h"

#include "core/error.h"

namespace zt::data {
namespace {

// Note [Encoding a stream]
// GPT-2's pattern decides a pre-token from the text at and after its start, never before,
// and looks at most three characters past the start (the contractions 're, 've, 'll) or one
// past the end (\s+(?!\S)); a run of letters, digits, punctuation or spaces that reaches
// the end of the text so far may grow. So a pre-token that ends at least three characters
// before the end of what has arrived is final: kLookaheadBytes (three characters of up to
// four bytes) is a safe margin. Pre-tokens from the first that ends later are held back
// and matched again with the next chunk.
constexpr std::size_t kLookaheadBytes = 3 * 4;

}  // namespace

BpeStreamEncoder::BpeStreamEncoder(BpeTokenizer& tokenizer, std::string source)
    : tokenizer_(tokenizer), source_(std::move(source)) {}

void BpeStreamEncoder::feed(std::string_view bytes, std::vector<std::int32_t>& ids) {
  if (bytes.empty()) return;
  if (!started_) {
    started_ = true;
    // Hugging Face's ByteLevel add_prefix_space, on the whole text's start.
    if (tokenizer_.add_prefix_space() && bytes.front() != ' ') {
      pending_ = " ";
      checked_bytes_ = 1;
      // Offsets in errors count input bytes, which the added space is not: pending_[1] is
      // input byte 0 (unsigned arithmetic wraps, so offset + position comes out right).
      pending_offset_ = static_cast<std::uint64_t>(-1);
    }
  }
  pending_.append(bytes);
  encode_pending(false, ids);
}

void BpeStreamEncoder::finish(std::vector<std::int32_t>& ids) { encode_pending(true, ids); }

void BpeStreamEncoder::encode_pending(bool at_end, std::vector<std::int32_t>& ids) {
  checked_bytes_ = utf8_complete_prefix(pending_, checked_bytes_, source_, pending_offset_);
  if (at_end && checked_bytes_ != pending_.size()) {
    throw FormatError(source_ + ": ends inside a UTF-8 character at byte " +
                      std::to_string(pending_offset_ + checked_bytes_) +
                      "; a BPE tokenizer reads UTF-8 text");
  }
  const std::string_view text(pending_.data(), checked_bytes_);
  tokenizer_.pre_tokenizer().split(text, pieces_);
  std::size_t consumed = 0;
  for (const std::string_view piece : pieces_) {
    const std::size_t end = consumed + piece.size();
    if (!at_end && end + kLookaheadBytes > text.size()) break;
    tokenizer_.encode_pre_token(piece, ids);
    consumed = end;
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
