// Reading generate's prompts from the command line or a file, and encoding them.
#include "apps/generate_prompts.h"

#include <charconv>
#include <sstream>
#include <string_view>

#include "core/error.h"
#include "data/safe_file.h"

namespace zt::apps {
namespace {

// Every byte of `file`, read to its end.
std::string read_all(data::InputFile& file) {
  std::string text;
  char buffer[1 << 16];
  while (const std::size_t got = file.read_some(buffer, sizeof(buffer))) text.append(buffer, got);
  return text;
}

}  // namespace

std::vector<Prompt> read_prompts(const std::vector<std::string>& given,
                                 const std::string& prompts_file) {
  if (!given.empty() && !prompts_file.empty()) {
    throw UsageError("generate takes its prompts from --prompt or from --prompts-file, not both");
  }
  std::vector<Prompt> prompts;
  if (prompts_file.empty()) {
    if (given.empty()) {
      throw UsageError("generate needs --prompt TEXT (once per prompt) or --prompts-file FILE");
    }
    for (std::size_t i = 0; i < given.size(); ++i) {
      const std::string name = given.size() == 1 ? "--prompt" : "--prompt " + std::to_string(i + 1);
      prompts.push_back({name, given[i]});
    }
    return prompts;
  }
  data::InputFile file = data::InputFile::open(prompts_file, "prompts file");
  const std::string text = read_all(file);
  std::size_t line_number = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + begin, end - begin);
    ++line_number;
    begin = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    prompts.push_back({prompts_file + ":" + std::to_string(line_number), std::string(line)});
  }
  if (prompts.empty()) {
    throw UsageError("--prompts-file " + data::quoted_path(prompts_file) +
                     " holds no prompt; write one prompt a line");
  }
  return prompts;
}

std::vector<std::int32_t> prompt_ids(const Prompt& prompt, data::BpeTokenizer* tokenizer,
                                     std::int64_t vocab_size) {
  std::vector<std::int32_t> ids;
  if (tokenizer != nullptr) {
    tokenizer->encode(prompt.text, ids);
  } else {
    std::istringstream words(prompt.text);
    std::string word;
    while (words >> word) {
      std::int64_t id = 0;
      const char* end = word.data() + word.size();
      const auto [ptr, ec] = std::from_chars(word.data(), end, id);
      if (ec != std::errc() || ptr != end) {
        throw UsageError(prompt.name +
                         ": expected whitespace-separated token ids (data.tokenizer is not "
                         "set), got '" +
                         word + "'");
      }
      if (id < 0 || id >= vocab_size) {
        throw UsageError(prompt.name + ": token id " + word + " is outside the vocabulary [0, " +
                         std::to_string(vocab_size) +
                         ") of the data (model.data_vocab_size, else model.vocab_size)");
      }
      ids.push_back(static_cast<std::int32_t>(id));
    }
  }
  if (ids.empty()) {
    throw UsageError(prompt.name + " '" + prompt.text +
                     "' encodes to no tokens; give at least one");
  }
  return ids;
}

}  // namespace zt::apps
