// Merging the ranks' error messages: per-rank numbers set aside, equal messages grouped,
// the numbers that varied shown in braces.
#include "runtime/launch/reported_errors.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <string_view>
#include <utility>

namespace zt::launch {
namespace {

// Note [Per-rank numbers]
// Every rank of a job fails alike more often than not: the same bad config, the same
// model too large for its GPU. Their messages then differ only where a rank names itself:
// its device ("cuda:3", or "cpu:3" for ranks on CPU devices), its rank ("rank 3",
// "memory/rank-3.json", "LOCAL_RANK=3") or its GPU ("GPU 3"). A number right after one of these
// words (matched case-insensitively, at the start of a word) is set aside before messages are
// compared, so four copies of one error read as one line; any other number (sizes, steps,
// line:column) must still match.
constexpr std::array<std::string_view, 8> kPerRankWords = {
    "cuda:", "cpu:", "rank ", "rank-", "rank=", "gpu ", "gpu:", "device ",
};

// Where the numbers that were set aside stood; not a character a message carries.
constexpr char kHole = '\x1f';

struct SplitMessage {
  std::string skeleton;             // the message with each per-rank number a kHole
  std::vector<std::string> values;  // those numbers, in order
};

bool starts_with_word(std::string_view text, std::size_t at, std::string_view word) {
  if (at > 0 && std::isalnum(static_cast<unsigned char>(text[at - 1]))) return false;
  if (text.size() - at < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[at + i])) != word[i]) return false;
  }
  return true;
}

std::size_t digits_at(std::string_view text, std::size_t at) {
  std::size_t end = at;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  return end - at;
}

SplitMessage split_per_rank_numbers(std::string_view message) {
  SplitMessage split;
  std::size_t i = 0;
  while (i < message.size()) {
    bool matched = false;
    for (std::string_view word : kPerRankWords) {
      if (!starts_with_word(message, i, word)) continue;
      const std::size_t digits = digits_at(message, i + word.size());
      if (digits == 0) continue;
      split.skeleton.append(message.substr(i, word.size())).push_back(kHole);
      split.values.emplace_back(message.substr(i + word.size(), digits));
      i += word.size() + digits;
      matched = true;
      break;
    }
    if (!matched) split.skeleton.push_back(message[i++]);
  }
  return split;
}

// Decimal numbers as written compare by length first: "9" < "10".
bool numerically_less(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

std::uint64_t parse(const std::string& digits) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return error == std::errc{} && end == digits.data() + digits.size() ? value : UINT64_MAX;
}

// The values one hole took across the ranks: "2" when all agree, else "{0,1}" or "{0..7}"
// (a run of three or more consecutive numbers written as its ends).
std::string describe_values(std::vector<std::string> values) {
  std::sort(values.begin(), values.end(), numerically_less);
  values.erase(std::unique(values.begin(), values.end()), values.end());
  if (values.size() == 1) return values.front();
  std::string text = "{";
  for (std::size_t i = 0; i < values.size();) {
    std::size_t end = i + 1;
    while (end < values.size() && parse(values[end - 1]) != UINT64_MAX &&
           parse(values[end]) == parse(values[end - 1]) + 1) {
      ++end;
    }
    if (i > 0) text += ",";
    text += end - i >= 3 ? values[i] + ".." + values[end - 1] : values[i];
    if (end - i == 2) text += "," + values[i + 1];
    i = end;
  }
  return text + "}";
}

struct Group {
  std::string skeleton;
  std::vector<std::vector<std::string>> values;  // one list per copy of the message
  std::vector<int> ranks;
};

std::string render(const Group& group) {
  std::string text;
  std::size_t hole = 0;
  for (char c : group.skeleton) {
    if (c != kHole) {
      text.push_back(c);
      continue;
    }
    std::vector<std::string> taken;
    for (const std::vector<std::string>& copy : group.values) taken.push_back(copy[hole]);
    text += describe_values(std::move(taken));
    ++hole;
  }
  return text;
}

}  // namespace

std::string describe_ranks(const std::vector<int>& ranks, int world_size) {
  if (ranks.size() == 1) return "rank " + std::to_string(ranks.front());
  if (world_size > 1 && ranks.size() == static_cast<std::size_t>(world_size)) {
    return "all " + std::to_string(world_size) + " ranks";
  }
  std::string text = "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

std::vector<ReportedError> merge_reported_errors(std::vector<RankErrors> by_rank) {
  std::stable_sort(by_rank.begin(), by_rank.end(),
                   [](const RankErrors& a, const RankErrors& b) { return a.rank < b.rank; });
  std::vector<Group> groups;
  for (const RankErrors& rank : by_rank) {
    for (const std::string& message : rank.messages) {
      SplitMessage split = split_per_rank_numbers(message);
      auto same = std::find_if(groups.begin(), groups.end(),
                               [&](const Group& g) { return g.skeleton == split.skeleton; });
      if (same == groups.end()) {
        groups.push_back(Group{std::move(split.skeleton), {}, {}});
        same = groups.end() - 1;
      }
      same->values.push_back(std::move(split.values));
      if (same->ranks.empty() || same->ranks.back() != rank.rank) same->ranks.push_back(rank.rank);
    }
  }
  std::vector<ReportedError> errors;
  for (const Group& group : groups) errors.push_back(ReportedError{render(group), group.ranks});
  return errors;
}

}  // namespace zt::launch
