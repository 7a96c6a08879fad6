// Where each language-model sample's window lies in a corpus of one or more token files.
// A window never crosses a file boundary (Note [Windows of a corpus]).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace zt::data {

// Note [Windows of a corpus]
// A window is seq_len + 1 consecutive tokens of one file; a file of n tokens has n - seq_len
// windows (starts 0 .. n - seq_len - 1, so the last target is the file's last token). The
// corpus's windows are numbered file by file, in the order of the files, and sample i takes
// window mix64(key ^ i) mod (total windows), key = random_key(seed, 0x7F11E). So sample i
// depends only on (seed, i, the files' token counts), never on the rank or world size that
// asks for it; for a single file this is the window order zerotrain has always used, so
// runs and checkpoints from before multi-file corpora resume bitwise. A window that would
// span the end of one file and the start of the next does not exist: documents are not
// glued across shards, and no read touches two files.
class WindowIndex {
 public:
  struct Window {
    std::size_t file = 0;
    std::int64_t first_token = 0;
  };

  // `file_tokens`: each file's token count, every one >= seq_len + 1 (callers refuse
  // shorter files with a message naming them).
  WindowIndex(std::span<const std::int64_t> file_tokens, std::int64_t seq_len, std::uint64_t seed);

  Window locate(std::int64_t sample) const;
  std::uint64_t windows() const { return windows_end_.empty() ? 0 : windows_end_.back(); }

 private:
  std::vector<std::uint64_t> windows_end_;  // windows of files 0..f, cumulative
  std::uint64_t key_;
};

}  // namespace zt::data
