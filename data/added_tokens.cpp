// Finding added tokens in text: leftmost-longest matching in two passes, as Hugging Face's
// AddedVocabulary does.
#include "data/added_tokens.h"

#include <algorithm>

namespace zt::data {

// Note [Added tokens in text]
// Hugging Face's Tokenizer.encode first cuts the text at its added tokens, then
// pre-tokenizes and encodes each piece between them on its own (so a pre-token never spans
// an added token, and ByteLevel's add_prefix_space applies to every piece). Tokens with
// "normalized": false are found first, on the raw text; those with "normalized": true then,
// in the pieces between, on the normalized text (the same text here: no normalizer is
// supported). Each pass takes, scanning left to right, the longest token that starts at
// the first position where any starts (aho-corasick's LeftmostLongest). Tokens with empty
// content are never matched. A pass decides a match at position p from the bytes in
// [p, p + longest_bytes()), which is what lets a stream be cut safely (Note [Encoding a
// stream]).
AddedTokens::AddedTokens(const std::vector<AddedToken>& tokens) {
  for (const AddedToken& token : tokens) {
    if (token.content.empty()) continue;
    Pass& pass = passes_[token.normalized ? 1 : 0];
    pass.by_first_byte[static_cast<unsigned char>(token.content.front())].emplace_back(
        token.content, static_cast<std::int32_t>(token.id));
    pass.empty = false;
    longest_bytes_ = std::max(longest_bytes_, token.content.size());
  }
  for (Pass& pass : passes_) {
    for (auto& candidates : pass.by_first_byte) {
      std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
        return a.first.size() > b.first.size();
      });
    }
  }
}

void AddedTokens::split(std::string_view text, std::vector<TextSegment>& segments) const {
  segments.clear();
  split_pass(text, 0, text.size(), 0, segments);
}

void AddedTokens::split_pass(std::string_view text, std::size_t begin, std::size_t end, int pass,
                             std::vector<TextSegment>& segments) const {
  if (begin == end) return;
  if (pass == 2) {
    segments.push_back({begin, end, -1});
    return;
  }
  const Pass& tokens = passes_[pass];
  std::size_t ordinary = begin;  // start of the ordinary text not yet emitted
  for (std::size_t at = begin; !tokens.empty && at < end; ++at) {
    for (const auto& [content, id] : tokens.by_first_byte[static_cast<unsigned char>(text[at])]) {
      if (content.size() > end - at || text.compare(at, content.size(), content) != 0) continue;
      split_pass(text, ordinary, at, pass + 1, segments);
      segments.push_back({at, at + content.size(), id});
      at += content.size() - 1;
      ordinary = at + 1;
      break;
    }
  }
  split_pass(text, ordinary, end, pass + 1, segments);
}

}  // namespace zt::data
