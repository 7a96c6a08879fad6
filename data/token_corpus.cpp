// Opening the files of a token corpus by format and reading its windows with pread, each id
// checked on the host as it is decoded.
#include "data/token_corpus.h"

#include <glob.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "core/error.h"
#include "data/llmc_token_file.h"
#include "data/lm_batch_internal.h"
#include "data/safe_file.h"
#include "data/token_file.h"
#include "data/token_file_format.h"
#include "data/window_index.h"

namespace zt::data {
namespace {

namespace fs = std::filesystem;
using namespace lm_internal;
using token_format::get_le;
using token_format::name;

constexpr const char* kHowToMake =
    "create one with `zerotrain prepare-data INPUT OUT.bin`, or point data.path at llm.c or "
    "nanoGPT token files";

bool has_zerotrain_magic(std::span<const unsigned char> bytes) {
  return bytes.size() >= token_format::kMagic.size() &&
         std::equal(token_format::kMagic.begin(), token_format::kMagic.end(), bytes.begin());
}

TokenShard open_whole_file(const fs::path& path, TokenFileFormat format);

// A shard whose corpus reads every token of the file.
TokenShard whole(TokenShard shard) {
  shard.first_token = 0;
  shard.tokens = shard.token_count;
  return shard;
}

TokenShard zerotrain_shard(const fs::path& path, std::span<const unsigned char> first_bytes,
                           std::uint64_t file_bytes) {
  const TokenFileHeader header = parse_token_file_header(path, first_bytes, file_bytes);
  return {path,
          TokenFileFormat::kZerotrain,
          kTokenFileHeaderBytes,
          header.token_width,
          static_cast<std::int64_t>(header.token_count),
          header.vocab_size};
}

TokenShard llmc_shard(const fs::path& path, std::span<const unsigned char> first_bytes,
                      std::uint64_t file_bytes) {
  const LlmcHeader header = parse_llmc_header(path, first_bytes, file_bytes);
  return {path,
          TokenFileFormat::kLlmc,
          kLlmcHeaderBytes,
          header.token_bytes,
          static_cast<std::int64_t>(header.token_count),
          std::nullopt};
}

TokenShard nanogpt_shard(const fs::path& path, std::uint64_t file_bytes) {
  if (file_bytes % 2 != 0) {
    throw FormatError(name(path) +
                      ": data.format = \"nanogpt\" reads headerless uint16 tokens, "
                      "but the file is " +
                      std::to_string(file_bytes) +
                      " bytes, an odd number; is it a nanoGPT train.bin/val.bin?");
  }
  return {path,        TokenFileFormat::kNanogpt, 0, 2, static_cast<std::int64_t>(file_bytes / 2),
          std::nullopt};
}

// Reads the windows of a corpus file by file with pread: nothing of a file stays in this
// process's memory after its window is decoded (the kernel's page cache is not ours).
class TokenCorpusSource final : public BatchSource {
 public:
  TokenCorpusSource(std::vector<TokenShard> shards, std::uint32_t vocab_size, std::int64_t seq_len,
                    std::uint64_t seed)
      : shards_(std::move(shards)),
        vocab_size_(vocab_size),
        seq_len_(seq_len),
        windows_(checked_sizes(shards_, seq_len), seq_len, seed) {
    for (const TokenShard& shard : shards_) {
      InputFile& file = files_.emplace_back(InputFile::open(shard.path, "token file", kHowToMake));
      const std::uint64_t expected =
          shard.first_token_byte +
          static_cast<std::uint64_t>(shard.token_count) * shard.token_bytes;
      if (file.size_bytes() != expected) {
        throw FormatError(name(shard.path) + ": it is " + std::to_string(file.size_bytes()) +
                          " bytes now, " + std::to_string(expected) +
                          " when its header was read; was it changed while opening?");
      }
    }
  }

  Batch load(SampleRange range, MemoryTracker& tracker) const override {
    LmBatch out = allocate_lm_batch(range, seq_len_, tracker);
    const auto window_tokens = static_cast<std::size_t>(seq_len_ + 1);
    std::vector<unsigned char> bytes(window_tokens * 4);
    std::vector<std::int32_t> window(window_tokens);
    for (std::int64_t i = 0; i < range.count; ++i) {
      const WindowIndex::Window where = windows_.locate(range.first + i);
      read_window(where, bytes, window);
      split_window(window.data(), seq_len_, i, out);
    }
    return std::move(out.batch);
  }

 private:
  static std::vector<std::int64_t> checked_sizes(const std::vector<TokenShard>& shards,
                                                 std::int64_t seq_len) {
    ZT_CHECK(!shards.empty(), "a token corpus without files");
    std::vector<std::int64_t> sizes;
    for (const TokenShard& shard : shards) {
      ZT_CHECK(shard.first_token >= 0 && shard.tokens >= 0 &&
                   shard.first_token + shard.tokens <= shard.token_count,
               "token range outside its file");
      check_holds_a_window(shard.path, shard.tokens, seq_len);
      sizes.push_back(shard.tokens);
    }
    return sizes;
  }

  // Reads and decodes one window, checking every id against its file's vocabulary.
  void read_window(const WindowIndex::Window& where, std::vector<unsigned char>& bytes,
                   std::vector<std::int32_t>& window) const {
    const TokenShard& shard = shards_[where.file];
    const std::uint64_t first_byte =
        shard.first_token_byte +
        static_cast<std::uint64_t>(shard.first_token + where.first_token) * shard.token_bytes;
    files_[where.file].read_at(first_byte, bytes.data(), window.size() * shard.token_bytes);
    const std::uint32_t vocab = shard.header_vocab_size.value_or(vocab_size_);
    for (std::size_t t = 0; t < window.size(); ++t) {
      const std::uint64_t id = get_le(bytes.data() + t * shard.token_bytes, shard.token_bytes);
      if (id >= vocab) throw_outside_vocabulary(shard, first_byte + t * shard.token_bytes, id);
      window[t] = static_cast<std::int32_t>(id);
    }
  }

  [[noreturn]] void throw_outside_vocabulary(const TokenShard& shard, std::uint64_t byte_offset,
                                             std::uint64_t id) const {
    const bool own = shard.header_vocab_size.has_value();
    const std::uint32_t vocab = shard.header_vocab_size.value_or(vocab_size_);
    throw FormatError(name(shard.path) + ": token " + std::to_string(id) + " at byte offset " +
                      std::to_string(byte_offset) + " is outside the vocabulary of " +
                      std::to_string(vocab) +
                      (own ? " its header records; the file is corrupt, re-create it"
                           : " (model.data_vocab_size, else model.vocab_size); set them to the "
                             "tokenizer's vocabulary (50257 for GPT-2's), or check "
                             "data.format"));
  }

  std::vector<TokenShard> shards_;
  std::uint32_t vocab_size_;
  std::int64_t seq_len_;
  WindowIndex windows_;
  std::vector<InputFile> files_;  // one per shard, read only with pread (thread-safe)
};

}  // namespace

TokenShard open_token_shard(const fs::path& path, TokenFileFormat format) {
  return whole(open_whole_file(path, format));
}

namespace {

std::string fraction_text(double fraction) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", fraction);
  return text;
}

}  // namespace

ValidationSplit split_off_validation(const TokenShard& shard, double val_fraction,
                                     std::int64_t seq_len) {
  ZT_CHECK(val_fraction > 0 && val_fraction < 1, "validation fraction outside (0, 1)");
  const auto held =
      static_cast<std::int64_t>(std::ceil(val_fraction * static_cast<double>(shard.tokens)));
  ValidationSplit split{shard, shard};
  split.training.tokens = shard.tokens - held;
  split.validation.first_token = shard.first_token + split.training.tokens;
  split.validation.tokens = held;
  if (std::min(split.training.tokens, held) < seq_len + 1) {
    throw FormatError(
        name(shard.path) + ": data.val_fraction = " + fraction_text(val_fraction) + " splits its " +
        std::to_string(shard.tokens) + " tokens into " + std::to_string(split.training.tokens) +
        " for training and " + std::to_string(held) +
        " for validation; each needs at least seq_len + 1 = " + std::to_string(seq_len + 1) +
        " (a window); change data.val_fraction, or use data.val_path");
  }
  return split;
}

namespace {

// The file's header read and checked, as the format says.
TokenShard open_whole_file(const fs::path& path, TokenFileFormat format) {
  const InputFile file = InputFile::open(path, "token file", kHowToMake);
  const std::uint64_t file_bytes = file.size_bytes();
  if (format == TokenFileFormat::kNanogpt) return nanogpt_shard(path, file_bytes);
  std::array<unsigned char, kLlmcHeaderBytes> first{};
  const auto have = static_cast<std::size_t>(std::min<std::uint64_t>(file_bytes, first.size()));
  file.read_at(0, first.data(), have);
  const std::span<const unsigned char> first_bytes(first.data(), have);
  switch (format) {
    case TokenFileFormat::kZerotrain:
      return zerotrain_shard(path, first_bytes, file_bytes);
    case TokenFileFormat::kLlmc:
      return llmc_shard(path, first_bytes, file_bytes);
    case TokenFileFormat::kAuto:
      if (has_zerotrain_magic(first_bytes)) return zerotrain_shard(path, first_bytes, file_bytes);
      if (has_llmc_magic(first_bytes)) return llmc_shard(path, first_bytes, file_bytes);
      throw FormatError(name(path) +
                        ": neither a zerotrain token file (magic \"ZTTOK\") nor an "
                        "llm.c one (magic 20240520 or 20240801); for nanoGPT's headerless "
                        "uint16 .bin files set data.format = \"nanogpt\"");
    case TokenFileFormat::kNanogpt:
      break;
  }
  throw InternalError("unknown token file format");
}

}  // namespace

std::unique_ptr<BatchSource> make_token_corpus_source(std::vector<TokenShard> shards,
                                                      std::uint32_t vocab_size,
                                                      std::int64_t seq_len, std::uint64_t seed) {
  check_seq_len(seq_len);
  return std::make_unique<TokenCorpusSource>(std::move(shards), vocab_size, seq_len, seed);
}

std::vector<fs::path> expand_token_path(const std::string& entry) {
  if (entry.find_first_of("*?[") == std::string::npos) return {entry};
  glob_t found{};
  const int rc = ::glob(entry.c_str(), GLOB_ERR, nullptr, &found);
  std::vector<fs::path> paths;
  if (rc == 0) {
    for (std::size_t i = 0; i < found.gl_pathc; ++i) paths.emplace_back(found.gl_pathv[i]);
  }
  ::globfree(&found);
  if (rc != 0 && rc != GLOB_NOMATCH) {
    throw IoError("cannot expand the pattern '" + entry +
                  "': a directory on its way could not be read (check its permissions)");
  }
  std::sort(paths.begin(), paths.end(),
            [](const fs::path& a, const fs::path& b) { return a.string() < b.string(); });
  return paths;
}

}  // namespace zt::data
