// A corpus of one or more token files read window by window: each file's header is checked
// when it is opened, its tokens only when a window is read (with pread, so a rank's
// resident memory does not grow with the corpus), each id against the vocabulary before
// the batch leaves the host.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/batch.h"

namespace zt::data {

// How a token file's bytes are laid out. kAuto tells the two formats with a magic apart
// (zerotrain's "ZTTOK", llm.c's 20240520 / 20240801); nanoGPT's headerless uint16 files
// have no magic and are read only when asked for.
enum class TokenFileFormat { kAuto, kZerotrain, kLlmc, kNanogpt };

// One opened and header-checked file of a corpus.
struct TokenShard {
  std::filesystem::path path;
  TokenFileFormat format = TokenFileFormat::kZerotrain;  // as read: never kAuto
  std::uint64_t first_token_byte = 0;                    // where token 0 starts
  std::uint32_t token_bytes = 0;                         // 1, 2 or 4
  std::int64_t token_count = 0;
  std::optional<std::uint32_t> header_vocab_size;  // zerotrain files record their vocabulary
};

// Reads and checks `path`'s header (Note [Token file layout] in token_file.h, Note [llm.c
// token file layout] in llmc_token_file.h; nanoGPT: the whole file is uint16 tokens, so its
// size must be even). Throws IoError when it cannot be read, FormatError naming it when it
// is not a file of `format`.
TokenShard open_token_shard(const std::filesystem::path& path, TokenFileFormat format);

// Sample i is window i of Note [Windows of a corpus] (window_index.h) over `shards`, in
// their order. Every id is checked when its window is read: against the file's own
// vocabulary for zerotrain files, against `vocab_size` for the others; one outside it is a
// FormatError naming the file, the byte offset, the id and the vocabulary. Throws
// FormatError naming the first file shorter than seq_len + 1 tokens.
std::unique_ptr<BatchSource> make_token_corpus_source(std::vector<TokenShard> shards,
                                                      std::uint32_t vocab_size,
                                                      std::int64_t seq_len, std::uint64_t seed);

// The files a data.path entry names: itself, or when it holds a glob character (* ? [) the
// paths it matches, sorted by name; empty when a pattern matches nothing.
std::vector<std::filesystem::path> expand_token_path(const std::string& entry);

}  // namespace zt::data
