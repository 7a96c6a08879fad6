// Byte-level tokenization of a text file into a token file, streamed in fixed-size chunks
// so any input size runs in the same small memory.
#include "data/prepare_data.h"

#include <array>
#include <vector>

#include "core/error.h"
#include "data/safe_file.h"
#include "data/token_file_writer.h"

namespace zt::data {
namespace {

constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

}  // namespace

PrepareDataStats prepare_data(const std::filesystem::path& input_text,
                              const std::filesystem::path& output_bin) {
  InputFile in = InputFile::open(input_text, "input text");
  // Before anything is written: the output may not be the input (Note [Replacing an output]).
  TokenFileWriter writer(output_bin, kByteVocabSize, in.identity());
  std::vector<unsigned char> bytes(kChunkBytes);
  std::vector<std::int32_t> tokens(kChunkBytes);
  std::array<bool, kByteVocabSize> seen{};
  PrepareDataStats stats;
  for (;;) {
    const std::size_t got = in.read_some(bytes.data(), bytes.size());
    if (got == 0) break;
    for (std::size_t i = 0; i < got; ++i) {
      tokens[i] = bytes[i];
      seen[bytes[i]] = true;
    }
    writer.append(std::span(tokens.data(), got));
    stats.input_bytes += static_cast<std::int64_t>(got);
  }
  if (stats.input_bytes == 0) {
    throw FormatError("input text '" + input_text.string() +
                      "' is empty; there is nothing to train on");
  }
  writer.finish();
  stats.tokens = static_cast<std::int64_t>(writer.tokens_written());
  for (bool s : seen) stats.distinct_tokens += s ? 1 : 0;
  return stats;
}

}  // namespace zt::data
