// Byte-level tokenization of a text file into a token file.
#include "data/prepare_data.h"

#include <array>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "core/error.h"
#include "data/token_file.h"

namespace zt::data {
namespace {

namespace fs = std::filesystem;

std::vector<unsigned char> read_input(const fs::path& input_text) {
  std::error_code ec;
  const fs::file_status status = fs::status(input_text, ec);
  if (ec || !fs::exists(status)) {
    throw IoError("cannot read input text '" + input_text.string() +
                  "': " + (ec ? ec.message() : std::string("no such file")) + "; check the path");
  }
  if (fs::is_directory(status)) {
    throw IoError("cannot read input text '" + input_text.string() +
                  "': it is a directory; pass a text file");
  }
  std::ifstream in(input_text, std::ios::binary);
  if (!in) {
    throw IoError("cannot read input text '" + input_text.string() +
                  "': " + std::generic_category().message(errno));
  }
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  if (in.bad()) {
    throw IoError("cannot read input text '" + input_text.string() +
                  "': " + std::generic_category().message(errno));
  }
  return bytes;
}

}  // namespace

PrepareDataStats prepare_data(const fs::path& input_text, const fs::path& output_bin) {
  const std::vector<unsigned char> bytes = read_input(input_text);
  if (bytes.empty()) {
    throw FormatError("input text '" + input_text.string() +
                      "' is empty; there is nothing to train on");
  }
  std::vector<std::int32_t> tokens(bytes.size());
  std::array<bool, kByteVocabSize> seen{};
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    tokens[i] = bytes[i];
    seen[bytes[i]] = true;
  }
  write_token_file(output_bin, tokens, kByteVocabSize);
  PrepareDataStats stats;
  stats.input_bytes = static_cast<std::int64_t>(bytes.size());
  stats.tokens = static_cast<std::int64_t>(tokens.size());
  for (bool s : seen) stats.distinct_tokens += s ? 1 : 0;
  return stats;
}

}  // namespace zt::data
