// The prompts `zerotrain generate` continues: --prompt TEXT (repeatable) or --prompts-file FILE
// (one prompt a line), each named as messages name it, and the token ids each encodes to.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/bpe_tokenizer.h"

namespace zt::apps {

struct Prompt {
  std::string name;  // how messages name it: "--prompt", "--prompt 2", "prompts.txt:3"
  std::string text;
};

// The prompts in order: `given` (each --prompt), else the lines of `prompts_file` (empty
// lines skipped, a trailing '\r' dropped). UsageError for both or neither, or a file that
// holds no prompt; IoError naming a file that cannot be read, or is no regular file (a
// directory, a device such as /dev/zero).
std::vector<Prompt> read_prompts(const std::vector<std::string>& given,
                                 const std::string& prompts_file);

// The prompt's ids: encoded with `tokenizer`, or without one read as whitespace-separated ids
// below `vocab_size`. UsageError naming the prompt for an id outside [0, vocab_size), a word
// that is no id, or a prompt of no tokens.
std::vector<std::int32_t> prompt_ids(const Prompt& prompt, data::BpeTokenizer* tokenizer,
                                     std::int64_t vocab_size);

}  // namespace zt::apps
