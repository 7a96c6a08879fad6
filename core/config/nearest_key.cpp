// Did-you-mean suggestions for unknown keys, sections and enum values: the nearest valid
// name by edit distance, a shared prefix ("optim" -> "optimizer") or a known alias
// ("learning_rate" -> "optimizer.lr").
#include <algorithm>
#include <cctype>
#include <numeric>

#include "core/config/config_internal.h"
#include "core/config/config_schema.h"

namespace zt::config_internal {
namespace {

constexpr std::size_t kNoMatch = static_cast<std::size_t>(-1);

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// How far `candidate` is from `word`, or kNoMatch if too far to be a plausible typo.
// Allowed: about one edit per three characters, or either being a prefix of the other
// (at least four characters long), which catches "reduce_bucket_size_bytes".
std::size_t match_distance(std::string_view typed, std::string_view candidate) {
  // Case never makes a different name: "AdamW" is meant as "adamw".
  const std::string word = lowercase(typed);
  const std::size_t distance = edit_distance(word, candidate);
  const std::size_t allowed = std::max<std::size_t>(1, word.size() / 3);
  if (distance <= allowed) return distance;
  const std::string_view shorter = word.size() < candidate.size() ? word : candidate;
  const std::string_view longer =
      word.size() < candidate.size() ? candidate : std::string_view(word);
  if (shorter.size() >= 4 && longer.substr(0, shorter.size()) == shorter) return distance;
  return kNoMatch;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance over three rolling rows.
  std::vector<std::size_t> before(b.size() + 1);
  std::vector<std::size_t> previous(b.size() + 1);
  std::vector<std::size_t> current(b.size() + 1);
  std::iota(previous.begin(), previous.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::string> nearest_word(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = kNoMatch;
  for (const std::string& candidate : candidates) {
    const std::size_t distance = match_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::optional<std::string> suggest_key(std::string_view section, std::string_view key) {
  // Ranked by the distance of the key name first, so "train.lr" finds "optimizer.lr",
  // then by the distance of the section, so "optimiser.type" finds "optimizer.type"
  // rather than "model.type".
  std::optional<std::string> best;
  std::pair<std::size_t, std::size_t> best_rank{kNoMatch, kNoMatch};
  for (const SectionSpec& spec : config_schema()) {
    const std::size_t section_distance = edit_distance(section, spec.name);
    for (const KeySpec& candidate : spec.keys) {
      std::size_t distance = match_distance(key, candidate.name);
      for (const std::string& alias : candidate.aliases) {
        distance = std::min(distance, match_distance(key, alias));
      }
      if (distance == kNoMatch) continue;
      const std::pair<std::size_t, std::size_t> rank{distance, section_distance};
      if (rank < best_rank) {
        best_rank = rank;
        best = candidate.full_name();
      }
    }
  }
  return best;
}

std::optional<std::string> suggest_section(std::string_view name) {
  std::vector<std::string> names;
  for (const SectionSpec& spec : config_schema()) names.push_back(spec.name);
  return nearest_word(name, names);
}

std::string did_you_mean(const std::optional<std::string>& suggestion) {
  return suggestion ? "; did you mean '" + *suggestion + "'?" : "";
}

}  // namespace zt::config_internal
