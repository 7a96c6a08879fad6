// prepare-data: turns text files (documents) into a token file, either with a byte-level
// vocabulary (each byte of the input is one token in [0, 256), the simplest tokenizer that
// loses nothing) or with a byte-level BPE tokenizer into llm.c's token file format; the
// last documents optionally into a second, validation file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "data/safe_file.h"

namespace zt::data {

class BpeTokenizer;

inline constexpr std::uint32_t kByteVocabSize = 256;

// What one prepare-data run reads and writes.
struct PrepareDataRequest {
  std::vector<std::filesystem::path> inputs;  // the documents, in order; at least one
  std::filesystem::path output;
  // The validation file, or empty for none: it takes the last documents, whole, the fewest
  // that hold at least val_fraction of the input bytes (at least one, and never the first,
  // so both files have a document; Note [Splitting off validation documents]).
  std::filesystem::path val_output;
  double val_fraction = 0;  // in (0, 1) with val_output
  // Written before every document, the first too (llm.c's fineweb.py starts each document
  // with <|endoftext|>); none when empty. Byte-level: the vocabulary grows to hold it.
  std::optional<std::int32_t> eot_id;
  ExistingOutput existing = ExistingOutput::kReplace;
};

struct PrepareDataStats {
  std::int64_t input_bytes = 0;
  std::int64_t documents = 0;  // in the training file (output)
  std::int64_t tokens = 0;     // in the training file; its input bytes for the byte-level
                               // vocabulary without eot_id
  std::int64_t val_documents = 0;
  std::int64_t val_tokens = 0;
  std::int64_t distinct_tokens = 0;  // token values that occur at least once, in either file
  std::uint32_t vocab_size = kByteVocabSize;
  const char* format = "zerotrain";  // "zerotrain", or "llm.c" (Note [llm.c token files])
};

// Streams the inputs (regular files; FIFOs, devices and directories are refused before
// reading) into token files, in bounded memory. Each output must be absent or a regular
// file other than every input, which `existing` says whether to replace (atomically, Note
// [Replacing an output] in safe_file.h) or refuse. Throws IoError naming the path when an
// input cannot be read or an output written, and FormatError when the inputs of an output
// are empty.
PrepareDataStats prepare_data(const PrepareDataRequest& request);

// The same with `tokenizer`: each document's text (UTF-8) is encoded chunk by chunk, cut only
// where its added tokens and pre-tokens are final (Note [Encoding a stream]), into llm.c's
// format (uint16 tokens, or uint32 past 65536 tokens). Also FormatError naming the file and
// byte offset of text that is not UTF-8.
PrepareDataStats prepare_data(const PrepareDataRequest& request, BpeTokenizer& tokenizer);

// One input, one output, no separator.
PrepareDataStats prepare_data(const std::filesystem::path& input_text,
                              const std::filesystem::path& output_bin,
                              ExistingOutput existing = ExistingOutput::kReplace);
PrepareDataStats prepare_data(const std::filesystem::path& input_text,
                              const std::filesystem::path& output_bin, BpeTokenizer& tokenizer,
                              ExistingOutput existing = ExistingOutput::kReplace);

}  // namespace zt::data
