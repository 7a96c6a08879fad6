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
  // The tokens a corpus reads: [first_token, first_token + tokens) of the file; all of them
  // unless split_off_validation cut the file in two (Note [Validation split]).
  std::int64_t first_token = 0;
  std::int64_t tokens = 0;
};

// Note [Validation split]
// data.val_fraction = f holds out the last ceil(f x n) tokens of each file of n tokens: the
// training corpus reads tokens [0, n - held) of every file, the validation corpus the rest.
// A window never crosses a file's range (Note [Windows of a corpus]), so no training window
// holds a validation token, and the split does not depend on seq_len, the world size or the
// seed. The last tokens rather than every k-th window: held-out text is contiguous, as a
// separate val.bin would be, and neighbouring training windows (which overlap) cannot leak
// into it. Both parts must hold a window; a file too short for that is refused by name.
struct ValidationSplit {
  TokenShard training;
  TokenShard validation;
};
// FormatError naming the file, the fraction and seq_len when either part would hold fewer
// than seq_len + 1 tokens.
ValidationSplit split_off_validation(const TokenShard& shard, double val_fraction,
                                     std::int64_t seq_len);

// Reads and checks `path`'s header (Note [Token file layout] in token_file.h, Note [llm.c
// token file layout] in llmc_token_file.h; nanoGPT: the whole file is uint16 tokens, so its
// size must be even). Throws IoError when it cannot be read, FormatError naming it when it
// is not a file of `format`.
TokenShard open_token_shard(const std::filesystem::path& path, TokenFileFormat format);

// Sample i is window i of Note [Windows of a corpus] (window_index.h) over the token
// ranges of `shards`, in their order. Every id is checked when its window is read: against the
// file's own vocabulary for zerotrain files, against `vocab_size` for the others; one outside it is
// a FormatError naming the file, the byte offset, the id and the vocabulary. Throws FormatError
// naming the first file shorter than seq_len + 1 tokens.
std::unique_ptr<BatchSource> make_token_corpus_source(std::vector<TokenShard> shards,
                                                      std::uint32_t vocab_size,
                                                      std::int64_t seq_len, std::uint64_t seed);

// The files a data.path entry names: itself, or when it holds a glob character (* ? [) the
// paths it matches, sorted by name; empty when a pattern matches nothing.
std::vector<std::filesystem::path> expand_token_path(const std::string& entry);

}  // namespace zt::data
