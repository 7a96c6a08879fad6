// A small JSON reader for the tokenizer files (tokenizer.json, vocab.json): the whole text
// parsed into a tree of values, each remembering its line:column for error messages.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace zt::data {

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  // "source:line:column" of the value's first character, for error messages.
  const std::string& position() const { return position_; }

  // The accessors below throw FormatError "source:line:column: `what`: expected ..., got
  // ..." when the value is of another kind.
  bool as_bool(std::string_view what) const;
  std::int64_t as_integer(std::string_view what) const;  // a number without fraction
  double as_number(std::string_view what) const;         // any number (1e-05, 500000.0)
  const std::string& as_string(std::string_view what) const;
  const std::vector<JsonValue>& as_array(std::string_view what) const;
  // Members in the order written (duplicates are refused when parsing).
  const std::vector<std::pair<std::string, JsonValue>>& as_object(std::string_view what) const;
  // An object's member, nullptr when it is absent (throws when this is not an object).
  const JsonValue* find(std::string_view key) const;

  static const char* kind_name(Kind kind);

 private:
  friend class JsonParser;
  Kind kind_ = Kind::kNull;
  std::string position_;
  bool boolean_ = false;
  std::string text_;  // a string's UTF-8 content, or a number's literal
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

// Parses `text` (RFC 8259; UTF-8). Throws FormatError "`source`:line:column: what was
// expected" on malformed input. `source` names the text in errors (usually its path).
JsonValue parse_json(std::string_view text, const std::string& source);

// Reads and parses the file at `path`; IoError when it cannot be read.
JsonValue read_json_file(const std::string& path);

}  // namespace zt::data
