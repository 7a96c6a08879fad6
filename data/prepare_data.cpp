// Tokenization of a text file into a token file (byte-level, or byte-level BPE), streamed
// in fixed-size chunks so any input size runs in the same small memory.
#include "data/prepare_data.h"

#include <array>
#include <vector>

#include "core/error.h"
#include "data/bpe_stream_encoder.h"
#include "data/llmc_token_file_writer.h"
#include "data/safe_file.h"
#include "data/token_file_writer.h"

namespace zt::data {
namespace {

constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

[[noreturn]] void empty_input(const std::filesystem::path& input_text) {
  throw FormatError("input text '" + input_text.string() +
                    "' is empty: it encodes to zero tokens, and there is nothing to train on");
}

}  // namespace

PrepareDataStats prepare_data(const std::filesystem::path& input_text,
                              const std::filesystem::path& output_bin, ExistingOutput existing) {
  InputFile in = InputFile::open(input_text, "input text");
  // Before anything is written: the output may not be the input, nor (kRefuse) exist (Note
  // [Replacing an output]).
  TokenFileWriter writer(output_bin, kByteVocabSize, in.identity(), existing);
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
  if (stats.input_bytes == 0) empty_input(input_text);
  writer.finish();
  stats.tokens = static_cast<std::int64_t>(writer.tokens_written());
  for (bool s : seen) stats.distinct_tokens += s ? 1 : 0;
  return stats;
}

PrepareDataStats prepare_data(const std::filesystem::path& input_text,
                              const std::filesystem::path& output_bin, BpeTokenizer& tokenizer,
                              ExistingOutput existing) {
  InputFile in = InputFile::open(input_text, "input text");
  LlmcTokenFileWriter writer(output_bin, tokenizer.vocab_size(), in.identity(), existing);
  BpeStreamEncoder encoder(tokenizer, "input text '" + input_text.string() + "'");
  std::string bytes(kChunkBytes, '\0');
  std::vector<std::int32_t> tokens;
  std::vector<bool> seen(tokenizer.vocab_size(), false);
  PrepareDataStats stats;
  stats.vocab_size = tokenizer.vocab_size();
  stats.format = "llm.c";
  auto write = [&] {
    for (const std::int32_t token : tokens) {
      if (!seen[token]) ++stats.distinct_tokens;
      seen[token] = true;
    }
    writer.append(tokens);
    tokens.clear();
  };
  for (;;) {
    const std::size_t got = in.read_some(bytes.data(), bytes.size());
    if (got == 0) break;
    encoder.feed(std::string_view(bytes.data(), got), tokens);
    write();
    stats.input_bytes += static_cast<std::int64_t>(got);
  }
  if (stats.input_bytes == 0) empty_input(input_text);
  encoder.finish(tokens);
  write();
  writer.finish();
  stats.tokens = static_cast<std::int64_t>(writer.tokens_written());
  return stats;
}

}  // namespace zt::data
