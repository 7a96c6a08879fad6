// Numbering the windows of a corpus and picking sample i's (Note [Windows of a corpus]).
#include "data/window_index.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "core/random.h"

namespace zt::data {

WindowIndex::WindowIndex(std::span<const std::int64_t> file_tokens, std::int64_t seq_len,
                         std::uint64_t seed)
    : key_(random_key(seed, 0x7F11Eu)) {
  ZT_CHECK(!file_tokens.empty() && seq_len >= 1, "window index of an empty corpus");
  std::uint64_t total = 0;
  for (const std::int64_t tokens : file_tokens) {
    ZT_CHECK(tokens >= seq_len + 1, "file of " + std::to_string(tokens) +
                                        " tokens is shorter than a window of " +
                                        std::to_string(seq_len + 1));
    total += static_cast<std::uint64_t>(tokens - seq_len);
    windows_end_.push_back(total);
  }
}

WindowIndex::Window WindowIndex::locate(std::int64_t sample) const {
  ZT_CHECK(sample >= 0, "negative sample index");
  const std::uint64_t window = mix64(key_ ^ static_cast<std::uint64_t>(sample)) % windows();
  const auto file = std::upper_bound(windows_end_.begin(), windows_end_.end(), window);
  const auto index = static_cast<std::size_t>(file - windows_end_.begin());
  const std::uint64_t file_first = index == 0 ? 0 : windows_end_[index - 1];
  return {index, static_cast<std::int64_t>(window - file_first)};
}

}  // namespace zt::data
