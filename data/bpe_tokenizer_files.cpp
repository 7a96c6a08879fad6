// Reading byte-level BPE tokenizers from their files: Hugging Face's tokenizer.json, or
// GPT-2's vocab.json and merges.txt. What cannot be honoured is refused, naming the field.
#include <fstream>

#include "core/error.h"
#include "data/bpe_tokenizer.h"
#include "data/json_document.h"

namespace zt::data {
namespace {

// Note [Supported tokenizers]
// Encoding must give exactly the ids the tokenizer's own library gives, so every part of a
// tokenizer.json that changes ids is either implemented or refused:
// - model.type "BPE" with merges by rank; dropout null (it makes encoding random),
//   continuing_subword_prefix / end_of_word_suffix empty, byte_fallback false.
//   ignore_merges (a pre-token that is itself a token is taken whole) is honoured.
// - pre_tokenizer: ByteLevel with use_regex true, that is GPT-2's pattern; its
//   add_prefix_space is honoured. Other patterns (Llama 3's Split + ByteLevel, ...) are
//   refused for now.
// - normalizer: null only.
// - Added tokens (added_tokens, special or not) are recognised in the text, as Hugging
//   Face's encode does (Note [Added tokens in text] in added_tokens.cpp): "<|endoftext|>"
//   written in a document is the one token, as llm.c's fineweb.py gets it from tiktoken
//   with allowed_special. Their "normalized" flag is honoured (which pass finds them);
//   lstrip, rstrip and single_word (which change what a match takes) are refused when true.
//   They are decoded to their text, and never inserted by a post-processor: encode is
//   Hugging Face's encode(text, add_special_tokens=False). A GPT-2 vocab.json has no
//   added tokens; its "<|endoftext|>" entry is taken as one, as GPT2Tokenizer takes it.
// - decoder: null or ByteLevel (decoding maps characters back to bytes).

constexpr const char* kGpt2EndOfText = "<|endoftext|>";

[[noreturn]] void unsupported(const JsonValue& value, const std::string& field,
                              const std::string& found, const std::string& supported) {
  throw FormatError(value.position() + ": " + field + " is " + found + "; prepare-data supports " +
                    supported);
}

std::string quoted(const std::string& text) { return "\"" + text + "\""; }

// The value of member `key` of `object` or nullptr; `null` counts as absent.
const JsonValue* member(const JsonValue& object, std::string_view key) {
  const JsonValue* value = object.find(key);
  return value != nullptr && !value->is_null() ? value : nullptr;
}

const JsonValue& required(const JsonValue& object, std::string_view key, const std::string& field,
                          const std::string& source) {
  const JsonValue* value = object.find(key);
  if (value == nullptr) {
    throw FormatError(object.position() + ": " + field + " is missing (in " + source + ")");
  }
  return *value;
}

std::string type_of(const JsonValue& object, const std::string& field, const std::string& source) {
  return required(object, "type", field + ".type", source).as_string(field + ".type");
}

void read_vocab(const JsonValue& vocab, const std::string& field, BpeModelFile& file) {
  for (const auto& [token, id] : vocab.as_object(field)) {
    file.vocab.emplace_back(token, id.as_integer(field + "[" + quoted(token) + "]"));
  }
}

void check_empty_or_null(const JsonValue& model, std::string_view key) {
  const JsonValue* value = member(model, key);
  if (value != nullptr && !value->as_string("model." + std::string(key)).empty()) {
    unsupported(*value, "model." + std::string(key), quoted(value->as_string("")),
                "only byte-level BPE without subword prefixes or suffixes (null or \"\")");
  }
}

void read_model(const JsonValue& model, const std::string& source, BpeModelFile& file) {
  const std::string type = type_of(model, "model", source);
  if (type != "BPE") {
    unsupported(required(model, "type", "model.type", source), "model.type", quoted(type),
                "only \"BPE\" models (byte-level BPE, as GPT-2's)");
  }
  if (const JsonValue* dropout = member(model, "dropout")) {
    unsupported(*dropout, "model.dropout", "set", "only null (dropout makes encoding random)");
  }
  check_empty_or_null(model, "continuing_subword_prefix");
  check_empty_or_null(model, "end_of_word_suffix");
  if (const JsonValue* fallback = member(model, "byte_fallback");
      fallback != nullptr && fallback->as_bool("model.byte_fallback")) {
    unsupported(*fallback, "model.byte_fallback", "true", "only false (byte-level BPE)");
  }
  if (const JsonValue* ignore = member(model, "ignore_merges")) {
    file.ignore_merges = ignore->as_bool("model.ignore_merges");
  }
  read_vocab(required(model, "vocab", "model.vocab", source), "model.vocab", file);
  const auto& merges = required(model, "merges", "model.merges", source).as_array("model.merges");
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const JsonValue& merge = merges[i];
    const std::string field = "model.merges[" + std::to_string(i) + "]";
    // Two spellings: "left right" (tokenizers before 0.20) and ["left", "right"].
    if (merge.kind() == JsonValue::Kind::kArray) {
      const auto& parts = merge.as_array(field);
      if (parts.size() != 2) {
        throw FormatError(merge.position() + ": " + field + ": expected two tokens, got " +
                          std::to_string(parts.size()));
      }
      file.merges.emplace_back(parts[0].as_string(field), parts[1].as_string(field));
    } else {
      const std::string& text = merge.as_string(field);
      const std::size_t space = text.find(' ');
      if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
        throw FormatError(merge.position() + ": " + field + ": expected \"left right\", got " +
                          quoted(text));
      }
      file.merges.emplace_back(text.substr(0, space), text.substr(space + 1));
    }
    file.merge_positions.push_back(merge.position() + ": " + field);
  }
}

void read_pre_tokenizer(const JsonValue* pre, const std::string& source, BpeModelFile& file) {
  const std::string supported = "only ByteLevel with use_regex = true (GPT-2's pattern)";
  if (pre == nullptr) {
    throw FormatError(source + ": pre_tokenizer is null; prepare-data supports " + supported);
  }
  const std::string type = type_of(*pre, "pre_tokenizer", source);
  if (type != "ByteLevel") unsupported(*pre, "pre_tokenizer.type", quoted(type), supported);
  if (const JsonValue* regex = member(*pre, "use_regex");
      regex != nullptr && !regex->as_bool("pre_tokenizer.use_regex")) {
    unsupported(*regex, "pre_tokenizer.use_regex", "false", supported);
  }
  if (const JsonValue* prefix = member(*pre, "add_prefix_space")) {
    file.add_prefix_space = prefix->as_bool("pre_tokenizer.add_prefix_space");
  }
}

AddedToken read_added_token(const JsonValue& token, const std::string& field,
                            const std::string& source) {
  AddedToken added;
  added.content =
      required(token, "content", field + ".content", source).as_string(field + ".content");
  added.id = required(token, "id", field + ".id", source).as_integer(field + ".id");
  // Absent, Hugging Face's AddedToken default: normalized.
  const JsonValue* normalized = member(token, "normalized");
  added.normalized = normalized == nullptr || normalized->as_bool(field + ".normalized");
  for (const char* key : {"lstrip", "rstrip", "single_word"}) {
    const JsonValue* value = member(token, key);
    if (value != nullptr && value->as_bool(field + "." + key)) {
      unsupported(*value, field + "." + key + " (of \"" + added.content + "\")", "true",
                  "only false (the token matches exactly its text)");
    }
  }
  return added;
}

BpeModelFile read_tokenizer_json(const JsonValue& root, const std::string& source) {
  BpeModelFile file;
  file.source = source;
  const JsonValue* model = member(root, "model");
  if (model == nullptr) throw FormatError(source + ": model is null; expected a BPE model");
  read_model(*model, source, file);
  if (const JsonValue* normalizer = member(root, "normalizer")) {
    unsupported(*normalizer, "normalizer.type", quoted(type_of(*normalizer, "normalizer", source)),
                "only null");
  }
  read_pre_tokenizer(member(root, "pre_tokenizer"), source, file);
  if (const JsonValue* decoder = member(root, "decoder")) {
    const std::string type = type_of(*decoder, "decoder", source);
    if (type != "ByteLevel") unsupported(*decoder, "decoder.type", quoted(type), "ByteLevel");
  }
  if (const JsonValue* added = member(root, "added_tokens")) {
    const auto& tokens = added->as_array("added_tokens");
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      file.added_tokens.push_back(
          read_added_token(tokens[i], "added_tokens[" + std::to_string(i) + "]", source));
    }
  }
  return file;
}

void read_merges_txt(const std::filesystem::path& path, BpeModelFile& file) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw IoError("cannot open merges file '" + path.string() +
                  "' (a GPT-2 vocab.json needs its merges.txt: beside it, or given with "
                  "--merges)");
  }
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (number == 1 && line.starts_with("#version"))) continue;
    const std::size_t space = line.find(' ');
    const std::string where = path.string() + ":" + std::to_string(number);
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
      throw FormatError(where + ": expected a merge \"left right\", got \"" + line + "\"");
    }
    file.merges.emplace_back(line.substr(0, space), line.substr(space + 1));
    file.merge_positions.push_back(where);
  }
  if (in.bad()) throw IoError("cannot read merges file '" + path.string() + "'");
}

}  // namespace

BpeTokenizer BpeTokenizer::load(const std::filesystem::path& path,
                                const std::filesystem::path& merges_path) {
  const JsonValue root = read_json_file(path.string());
  root.as_object(path.string() + ": the tokenizer file");
  if (root.find("model") != nullptr) {
    if (!merges_path.empty()) {
      throw UsageError("--merges goes with a GPT-2 vocab.json; '" + path.string() +
                       "' is a tokenizer.json, which holds its merges");
    }
    return BpeTokenizer(read_tokenizer_json(root, path.string()));
  }
  // GPT-2's vocab.json: one object of token -> id.
  const std::filesystem::path merges =
      merges_path.empty() ? path.parent_path() / "merges.txt" : merges_path;
  BpeModelFile file;
  file.source = path.string() + " and " + merges.string();
  read_vocab(root, "vocab", file);
  // GPT-2's <|endoftext|> is a vocabulary entry there; Hugging Face's GPT2Tokenizer makes it
  // its special token, and so does this.
  for (const auto& [token, id] : file.vocab) {
    if (token == kGpt2EndOfText) file.added_tokens.push_back({token, id, false});
  }
  read_merges_txt(merges, file);
  return BpeTokenizer(std::move(file));
}

}  // namespace zt::data
