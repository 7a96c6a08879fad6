// Tokenization of text files (documents) into token files (byte-level, or byte-level BPE),
// streamed in fixed-size chunks so any input size runs in the same small memory.
#include "data/prepare_data.h"

#include <algorithm>
#include <array>
#include <span>
#include <vector>

#include "core/error.h"
#include "data/bpe_stream_encoder.h"
#include "data/llmc_token_file_writer.h"
#include "data/safe_file.h"
#include "data/token_file_writer.h"

namespace zt::data {
namespace {

constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

// Note [Splitting off validation documents]
// The validation file takes the last documents, whole: a document is never cut between the
// two files, so no text the model validates on was half seen in training. How many is
// decided before anything is encoded, from the inputs' sizes in bytes, so the inputs are
// read and encoded once, in bounded memory: the fewest last documents whose bytes reach
// val_fraction of all the input bytes. For the byte-level vocabulary that is the same
// fraction of the tokens; for BPE it is close to it (each document has roughly the same
// bytes per token). At least one document goes to each file.
std::size_t first_val_document(const std::vector<std::uint64_t>& sizes, double val_fraction) {
  ZT_CHECK(sizes.size() >= 2, "a validation split needs two documents");
  ZT_CHECK(val_fraction > 0 && val_fraction < 1, "val_fraction outside (0, 1)");
  double total = 0;
  for (const std::uint64_t size : sizes) total += static_cast<double>(size);
  const double target = val_fraction * total;
  double val_bytes = 0;
  std::size_t first = sizes.size();
  do {
    --first;
    val_bytes += static_cast<double>(sizes[first]);
  } while (first > 1 && val_bytes < target);
  return first;
}

[[noreturn]] void empty_inputs(const std::vector<std::filesystem::path>& inputs, std::size_t begin,
                               std::size_t end, const std::filesystem::path& output) {
  if (end - begin == 1) {
    throw FormatError("input text " + quoted_path(inputs[begin]) +
                      " is empty: it encodes to zero tokens, and there is nothing to train on");
  }
  throw FormatError("the " + std::to_string(end - begin) + " input texts for " +
                    quoted_path(output) + " (" + quoted_path(inputs[begin]) + " to " +
                    quoted_path(inputs[end - 1]) +
                    ") are all empty: there is nothing to train on; give inputs with text");
}

// Writes request.inputs, each encoded by `encode(InputFile&, emit)` (which passes its
// tokens to emit(span) chunk by chunk and returns the bytes it read), to Writer files.
template <typename Writer, typename Encode>
PrepareDataStats write_documents(const PrepareDataRequest& request, std::uint32_t vocab_size,
                                 Encode encode) {
  const std::vector<std::filesystem::path>& inputs = request.inputs;
  ZT_CHECK(!inputs.empty(), "prepare_data without inputs");
  ZT_CHECK(!request.eot_id ||
               (*request.eot_id >= 0 && static_cast<std::uint32_t>(*request.eot_id) < vocab_size),
           "eot_id outside the vocabulary");
  // Every input is checked, and each output against each input, before a byte is written
  // (Note [Replacing an output]).
  std::vector<std::uint64_t> sizes;
  std::optional<FileIdentity> first_input;
  for (const std::filesystem::path& path : inputs) {
    const InputFile in = InputFile::open(path, "input text");
    sizes.push_back(in.size_bytes());
    if (!first_input) first_input = in.identity();
    check_replaceable_output(request.output, "token file", in.identity(), request.existing);
    if (!request.val_output.empty()) {
      check_replaceable_output(request.val_output, "token file", in.identity(), request.existing);
    }
  }
  const bool split = !request.val_output.empty();
  const std::size_t first_val =
      split ? first_val_document(sizes, request.val_fraction) : inputs.size();
  Writer train(request.output, vocab_size, first_input, request.existing);
  std::optional<Writer> val;
  if (split) val.emplace(request.val_output, vocab_size, first_input, request.existing);

  PrepareDataStats stats;
  stats.vocab_size = vocab_size;
  std::vector<bool> seen(vocab_size, false);
  std::array<std::int64_t, 2> bytes{};  // read for the training and the validation file
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Writer& writer = i < first_val ? train : *val;
    auto emit = [&](std::span<const std::int32_t> tokens) {
      for (const std::int32_t token : tokens) {
        if (!seen[token]) ++stats.distinct_tokens;
        seen[token] = true;
      }
      writer.append(tokens);
    };
    InputFile in = InputFile::open(inputs[i], "input text");
    if (request.eot_id) emit(std::span(&*request.eot_id, 1));
    bytes[i < first_val ? 0 : 1] += encode(in, emit);
  }
  if (bytes[0] == 0) empty_inputs(inputs, 0, first_val, request.output);
  if (split && bytes[1] == 0) empty_inputs(inputs, first_val, inputs.size(), request.val_output);
  if (val) val->finish();
  train.finish();
  stats.input_bytes = bytes[0] + bytes[1];
  stats.documents = static_cast<std::int64_t>(first_val);
  stats.tokens = static_cast<std::int64_t>(train.tokens_written());
  if (val) {
    stats.val_documents = static_cast<std::int64_t>(inputs.size() - first_val);
    stats.val_tokens = static_cast<std::int64_t>(val->tokens_written());
  }
  return stats;
}

// One input to one output: the request of the two single-document forms.
PrepareDataRequest single_document(const std::filesystem::path& input_text,
                                   const std::filesystem::path& output_bin,
                                   ExistingOutput existing) {
  PrepareDataRequest request;
  request.inputs = {input_text};
  request.output = output_bin;
  request.existing = existing;
  return request;
}

}  // namespace

PrepareDataStats prepare_data(const PrepareDataRequest& request) {
  std::uint32_t vocab_size = kByteVocabSize;
  if (request.eot_id && *request.eot_id >= 0) {
    vocab_size = std::max(vocab_size, static_cast<std::uint32_t>(*request.eot_id) + 1);
  }
  std::vector<unsigned char> bytes(kChunkBytes);
  std::vector<std::int32_t> tokens(kChunkBytes);
  auto encode = [&](InputFile& in, auto& emit) {
    std::int64_t read = 0;
    for (;;) {
      const std::size_t got = in.read_some(bytes.data(), bytes.size());
      if (got == 0) break;
      for (std::size_t i = 0; i < got; ++i) tokens[i] = bytes[i];
      emit(std::span<const std::int32_t>(tokens.data(), got));
      read += static_cast<std::int64_t>(got);
    }
    return read;
  };
  return write_documents<TokenFileWriter>(request, vocab_size, encode);
}

PrepareDataStats prepare_data(const PrepareDataRequest& request, BpeTokenizer& tokenizer) {
  std::string bytes(kChunkBytes, '\0');
  std::vector<std::int32_t> tokens;
  auto encode = [&](InputFile& in, auto& emit) {
    BpeStreamEncoder encoder(tokenizer, "input text " + quoted_path(in.path()));
    std::int64_t read = 0;
    for (;;) {
      const std::size_t got = in.read_some(bytes.data(), bytes.size());
      if (got == 0) break;
      encoder.feed(std::string_view(bytes.data(), got), tokens);
      emit(std::span<const std::int32_t>(tokens));
      tokens.clear();
      read += static_cast<std::int64_t>(got);
    }
    encoder.finish(tokens);
    emit(std::span<const std::int32_t>(tokens));
    tokens.clear();
    return read;
  };
  PrepareDataStats stats =
      write_documents<LlmcTokenFileWriter>(request, tokenizer.vocab_size(), encode);
  stats.format = "llm.c";
  return stats;
}

PrepareDataStats prepare_data(const std::filesystem::path& input_text,
                              const std::filesystem::path& output_bin, ExistingOutput existing) {
  return prepare_data(single_document(input_text, output_bin, existing));
}

PrepareDataStats prepare_data(const std::filesystem::path& input_text,
                              const std::filesystem::path& output_bin, BpeTokenizer& tokenizer,
                              ExistingOutput existing) {
  return prepare_data(single_document(input_text, output_bin, existing), tokenizer);
}

}  // namespace zt::data
