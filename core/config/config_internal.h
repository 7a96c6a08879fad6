// Helpers shared by the files of core/config (text formatting, did-you-mean suggestions);
// no other folder includes this header.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zt::config_internal {

// Shortest text that parses back to `value` and still reads as a float in TOML:
// 1.0, 0.001, 1e-8, 300.0, inf, nan.
std::string format_float(double value);

// `text` as a TOML basic string, quotes and escapes included: "runs/a \"b\"".
std::string quote_string(std::string_view text);

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF), as TOML requires of every document; nullopt when it is, else the offset of the
// first byte that is not.
std::optional<std::size_t> invalid_utf8_offset(std::string_view text);

// Edit distance counting insertions, deletions, substitutions and adjacent swaps as one.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` if it is close enough to be what was meant.
std::optional<std::string> nearest_word(std::string_view word,
                                        const std::vector<std::string>& candidates);

// The valid key (as "section.key") nearest to the unknown `section`.`key`, looking in
// every section so a misplaced key finds its home; `section` is empty for a top-level key.
std::optional<std::string> suggest_key(std::string_view section, std::string_view key);

// The valid section nearest to the unknown `name`.
std::optional<std::string> suggest_section(std::string_view name);

// "; did you mean 'x'?" or "" when there is no suggestion.
std::string did_you_mean(const std::optional<std::string>& suggestion);

}  // namespace zt::config_internal
