// Byte-level BPE encoding and decoding over the tables built from a tokenizer file.
#include "data/bpe_tokenizer.h"

#include <queue>

#include "core/error.h"
#include "data/byte_level_alphabet.h"

namespace zt::data {
namespace {

constexpr std::size_t kCacheEntries = std::size_t{1} << 18;
constexpr std::int64_t kMaxVocabSize = std::int64_t{1} << 31;

}  // namespace

BpeTokenizer::BpeTokenizer(BpeModelFile file)
    : source_(std::move(file.source)),
      add_prefix_space_(file.add_prefix_space),
      ignore_merges_(file.ignore_merges) {
  std::int64_t size = 0;
  for (const auto& [token, id] : file.vocab) size = std::max(size, id + 1);
  for (const AddedToken& token : file.added_tokens) size = std::max(size, token.id + 1);
  if (size == 0) throw FormatError(source_ + ": the vocabulary is empty");
  if (size > kMaxVocabSize) {
    throw FormatError(source_ + ": token id " + std::to_string(size - 1) +
                      " is beyond the 2^31 ids a token file holds");
  }
  vocab_size_ = static_cast<std::uint32_t>(size);
  bytes_of_.resize(vocab_size_);
  used_.resize(vocab_size_, false);
  id_of_.reserve(file.vocab.size());
  for (const auto& [token, id] : file.vocab) {
    if (id < 0) {
      throw FormatError(source_ + ": token \"" + token + "\" has a negative id " +
                        std::to_string(id));
    }
    std::optional<std::string> bytes = byte_level_bytes(token);
    if (!bytes) {
      throw FormatError(source_ + ": vocabulary token \"" + token +
                        "\" is not written in GPT-2's byte-level alphabet; only byte-level "
                        "BPE vocabularies are supported");
    }
    if (!id_of_.emplace(token, static_cast<std::int32_t>(id)).second) {
      throw FormatError(source_ + ": vocabulary token \"" + token + "\" appears twice");
    }
    bytes_of_[id] = std::move(*bytes);
    used_[id] = true;
  }
  // Added (special) tokens decode to their text as written, not through the byte map.
  for (const AddedToken& token : file.added_tokens) {
    if (token.id < 0) {
      throw FormatError(source_ + ": added token \"" + token.content + "\" has a negative id " +
                        std::to_string(token.id));
    }
    bytes_of_[token.id] = token.content;
    used_[token.id] = true;
    added_id_of_.emplace(token.content, static_cast<std::int32_t>(token.id));
  }
  added_tokens_ = AddedTokens(file.added_tokens);
  for (unsigned b = 0; b < 256; ++b) {
    const auto it = id_of_.find(byte_level_symbol(static_cast<unsigned char>(b)));
    if (it == id_of_.end()) {
      throw FormatError(source_ + ": the vocabulary has no token for byte " + std::to_string(b) +
                        " (\"" + byte_level_symbol(static_cast<unsigned char>(b)) +
                        "\"); a byte-level BPE needs all 256 bytes so that any text encodes");
    }
    byte_id_[b] = it->second;
  }
  merges_.reserve(file.merges.size());
  for (std::size_t rank = 0; rank < file.merges.size(); ++rank) {
    const auto& [left, right] = file.merges[rank];
    const std::string& where = file.merge_positions[rank];
    auto id = [&](const std::string& token) {
      const auto it = id_of_.find(token);
      if (it == id_of_.end()) {
        throw FormatError(where + ": merge \"" + left + " " + right + "\" names \"" + token +
                          "\", which is not in the vocabulary");
      }
      return it->second;
    };
    const std::int32_t left_id = id(left);
    const std::int32_t right_id = id(right);
    const std::int32_t merged_id = id(left + right);
    // A pair listed twice keeps its first (lowest) rank.
    merges_.emplace(pair_key(left_id, right_id), Merge{static_cast<std::int32_t>(rank), merged_id});
  }
}

// Note [Merging by rank]
// BPE repeatedly merges, among all adjacent pairs of a pre-token's symbols, the pair whose
// merge was learned first (lowest rank); among equal pairs the leftmost goes first. A heap
// of candidate pairs ordered by (rank, position) does this in O(n log n) where rescanning
// the word after each merge would be O(n^2) on a long run such as a page of spaces. A
// candidate is stale when either of its symbols was merged away since it was pushed; it is
// recognised by the pair now at its position no longer making the same token.
void BpeTokenizer::merge_symbols(std::vector<std::int32_t>& symbols) const {
  const std::size_t n = symbols.size();
  if (n < 2) return;
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::size_t> next(n);
  std::vector<std::size_t> prev(n);
  std::vector<bool> alive(n, true);
  for (std::size_t i = 0; i < n; ++i) {
    next[i] = i + 1 < n ? i + 1 : kNone;
    prev[i] = i > 0 ? i - 1 : kNone;
  }
  struct Candidate {
    std::int32_t rank;
    std::size_t position;
    std::int32_t merged_id;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : position > other.position;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto push = [&](std::size_t left) {
    if (left == kNone || next[left] == kNone) return;
    const auto it = merges_.find(pair_key(symbols[left], symbols[next[left]]));
    if (it != merges_.end()) heap.push({it->second.rank, left, it->second.merged_id});
  };
  for (std::size_t i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    const std::size_t left = top.position;
    if (!alive[left] || next[left] == kNone) continue;
    const auto it = merges_.find(pair_key(symbols[left], symbols[next[left]]));
    if (it == merges_.end() || it->second.merged_id != top.merged_id ||
        it->second.rank != top.rank) {
      continue;  // stale
    }
    const std::size_t right = next[left];
    symbols[left] = top.merged_id;
    alive[right] = false;
    next[left] = next[right];
    if (next[right] != kNone) prev[next[right]] = left;
    push(prev[left]);
    push(left);
  }
  std::size_t out = 0;
  for (std::size_t i = 0; i != kNone; i = next[i]) symbols[out++] = symbols[i];
  symbols.resize(out);
}

void BpeTokenizer::encode_pre_token(std::string_view piece, std::vector<std::int32_t>& ids) {
  const std::string key(piece);
  if (const auto hit = cache_.find(key); hit != cache_.end()) {
    ids.insert(ids.end(), hit->second.begin(), hit->second.end());
    return;
  }
  std::vector<std::int32_t> symbols;
  const auto whole = ignore_merges_ ? id_of_.find(byte_level_symbols(piece)) : id_of_.end();
  if (whole != id_of_.end()) {
    symbols.push_back(whole->second);
  } else {
    symbols.reserve(piece.size());
    for (const char c : piece) symbols.push_back(byte_id_[static_cast<unsigned char>(c)]);
    merge_symbols(symbols);
  }
  ids.insert(ids.end(), symbols.begin(), symbols.end());
  if (cache_.size() >= kCacheEntries) cache_.clear();
  cache_.emplace(key, std::move(symbols));
}

std::optional<std::int32_t> BpeTokenizer::added_token_id(std::string_view content) const {
  const auto it = added_id_of_.find(std::string(content));
  if (it == added_id_of_.end()) return std::nullopt;
  return it->second;
}

void BpeTokenizer::encode(std::string_view text, std::vector<std::int32_t>& ids) {
  if (utf8_complete_prefix(text, 0, "text", 0) != text.size()) {
    throw FormatError("text: ends inside a UTF-8 character; a BPE tokenizer reads UTF-8 text");
  }
  added_tokens_.split(text, segments_);
  for (const TextSegment& segment : segments_) {
    if (segment.id >= 0) {
      ids.push_back(segment.id);
    } else {
      encode_ordinary(text.substr(segment.begin, segment.end - segment.begin), ids);
    }
  }
}

void BpeTokenizer::encode_ordinary(std::string_view text, std::vector<std::int32_t>& ids) {
  std::string prefixed;
  if (add_prefix_space_ && !text.empty() && text.front() != ' ') {
    prefixed = " " + std::string(text);
    text = prefixed;
  }
  pre_tokenizer_.split(text, pieces_);
  for (const std::string_view piece : pieces_) encode_pre_token(piece, ids);
}

std::optional<std::int32_t> BpeTokenizer::token_id(std::string_view text) const {
  if (const auto it = added_id_of_.find(std::string(text)); it != added_id_of_.end()) {
    return it->second;
  }
  if (const auto it = id_of_.find(byte_level_symbols(text)); it != id_of_.end()) {
    return it->second;
  }
  return std::nullopt;
}

std::string BpeTokenizer::decode(std::span<const std::int32_t> ids) const {
  std::string text;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::int32_t id = ids[i];
    if (id < 0 || static_cast<std::uint32_t>(id) >= vocab_size_ || !used_[id]) {
      throw FormatError("cannot decode token " + std::to_string(id) + " at position " +
                        std::to_string(i) + ": " + source_ + " has no token with that id");
    }
    text += bytes_of_[id];
  }
  return text;
}

}  // namespace zt::data
