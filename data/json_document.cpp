// A recursive-descent JSON parser (RFC 8259) that keeps each value's source position, and
// the typed accessors that turn a wrong kind into a message naming the field.
#include "data/json_document.h"

#include <charconv>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "core/error.h"

namespace zt::data {

const char* JsonValue::kind_name(Kind kind) {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "a boolean";
    case Kind::kNumber:
      return "a number";
    case Kind::kString:
      return "a string";
    case Kind::kArray:
      return "an array";
    case Kind::kObject:
      return "an object";
  }
  return "?";
}

namespace {

[[noreturn]] void wrong_kind(const JsonValue& value, std::string_view what, const char* expected) {
  throw FormatError(value.position() + ": " + std::string(what) + ": expected " + expected +
                    ", got " + JsonValue::kind_name(value.kind()));
}

}  // namespace

bool JsonValue::as_bool(std::string_view what) const {
  if (kind_ != Kind::kBool) wrong_kind(*this, what, "a boolean");
  return boolean_;
}

std::int64_t JsonValue::as_integer(std::string_view what) const {
  if (kind_ != Kind::kNumber) wrong_kind(*this, what, "an integer");
  std::int64_t value = 0;
  const char* end = text_.data() + text_.size();
  const auto [ptr, ec] = std::from_chars(text_.data(), end, value);
  if (ec != std::errc() || ptr != end) {
    throw FormatError(position_ + ": " + std::string(what) + ": expected an integer, got " + text_);
  }
  return value;
}

double JsonValue::as_number(std::string_view what) const {
  if (kind_ != Kind::kNumber) wrong_kind(*this, what, "a number");
  double value = 0;
  const char* end = text_.data() + text_.size();
  const auto [ptr, ec] = std::from_chars(text_.data(), end, value);
  if (ec != std::errc() || ptr != end) {
    throw FormatError(position_ + ": " + std::string(what) + ": expected a number, got " + text_);
  }
  return value;
}

const std::string& JsonValue::as_string(std::string_view what) const {
  if (kind_ != Kind::kString) wrong_kind(*this, what, "a string");
  return text_;
}

const std::vector<JsonValue>& JsonValue::as_array(std::string_view what) const {
  if (kind_ != Kind::kArray) wrong_kind(*this, what, "an array");
  return items_;
}

const std::vector<std::pair<std::string, JsonValue>>& JsonValue::as_object(
    std::string_view what) const {
  if (kind_ != Kind::kObject) wrong_kind(*this, what, "an object");
  return members_;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& [name, value] : as_object(key)) {
    if (name == key) return &value;
  }
  return nullptr;
}

class JsonParser {
 public:
  JsonParser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  JsonValue parse_document() {
    skip_space();
    JsonValue value = parse_value(0);
    skip_space();
    if (at_ < text_.size()) fail("unexpected text after the JSON value");
    return value;
  }

 private:
  static constexpr int kMaxDepth = 256;

  std::string here() const {
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < at_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) {
        ++column;
      }
    }
    return source_ + ":" + std::to_string(line) + ":" + std::to_string(column);
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw FormatError(here() + ": malformed JSON: " + message);
  }

  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) {
      ++at_;
    }
  }

  void expect_literal(std::string_view literal) {
    if (text_.substr(at_, literal.size()) != literal) {
      fail("expected a value (object, array, string, number, true, false or null)");
    }
    at_ += literal.size();
  }

  JsonValue parse_value(int depth) {
    if (depth > kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    if (at_ >= text_.size()) fail("unexpected end of text, expected a value");
    JsonValue value;
    value.position_ = here_fast();
    const char c = text_[at_];
    if (c == '{') {
      value.kind_ = JsonValue::Kind::kObject;
      parse_object(value, depth);
    } else if (c == '[') {
      value.kind_ = JsonValue::Kind::kArray;
      parse_array(value, depth);
    } else if (c == '"') {
      value.kind_ = JsonValue::Kind::kString;
      value.text_ = parse_string();
    } else if (c == 't' || c == 'f') {
      value.kind_ = JsonValue::Kind::kBool;
      value.boolean_ = c == 't';
      expect_literal(c == 't' ? "true" : "false");
    } else if (c == 'n') {
      expect_literal("null");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      value.kind_ = JsonValue::Kind::kNumber;
      value.text_ = parse_number();
    } else {
      fail("expected a value (object, array, string, number, true, false or null)");
    }
    return value;
  }

  // Positions are computed incrementally: a tokenizer.json holds ~10^5 values.
  std::string here_fast() {
    for (; counted_ < at_; ++counted_) {
      if (text_[counted_] == '\n') {
        ++line_;
        column_ = 1;
      } else if ((static_cast<unsigned char>(text_[counted_]) & 0xC0) != 0x80) {
        ++column_;
      }
    }
    return source_ + ":" + std::to_string(line_) + ":" + std::to_string(column_);
  }

  void parse_object(JsonValue& value, int depth) {
    ++at_;  // '{'
    skip_space();
    if (at_ < text_.size() && text_[at_] == '}') {
      ++at_;
      return;
    }
    std::unordered_set<std::string> names;
    for (;;) {
      skip_space();
      if (at_ >= text_.size() || text_[at_] != '"') fail("expected a member name in quotes");
      std::string key = parse_string();
      if (!names.insert(key).second) fail("duplicate member \"" + key + "\"");
      skip_space();
      if (at_ >= text_.size() || text_[at_] != ':') fail("expected ':' after a member name");
      ++at_;
      skip_space();
      value.members_.emplace_back(std::move(key), parse_value(depth + 1));
      skip_space();
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < text_.size() && text_[at_] == '}') {
        ++at_;
        return;
      }
      fail("expected ',' or '}' in an object");
    }
  }

  void parse_array(JsonValue& value, int depth) {
    ++at_;  // '['
    skip_space();
    if (at_ < text_.size() && text_[at_] == ']') {
      ++at_;
      return;
    }
    for (;;) {
      skip_space();
      value.items_.push_back(parse_value(depth + 1));
      skip_space();
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < text_.size() && text_[at_] == ']') {
        ++at_;
        return;
      }
      fail("expected ',' or ']' in an array");
    }
  }

  std::string parse_number() {
    const std::size_t start = at_;
    auto digits = [&] {
      const std::size_t from = at_;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
      return at_ > from;
    };
    if (text_[at_] == '-') ++at_;
    if (!digits()) fail("expected digits in a number");
    if (at_ < text_.size() && text_[at_] == '.') {
      ++at_;
      if (!digits()) fail("expected digits after '.' in a number");
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      ++at_;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      if (!digits()) fail("expected digits in a number's exponent");
    }
    return std::string(text_.substr(start, at_ - start));
  }

  unsigned hex4() {
    if (at_ + 4 > text_.size()) fail("expected four hex digits after \\u");
    unsigned value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[at_++];
      value <<= 4;
      if (c >= '0' && c <= '9') {
        value |= static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        value |= static_cast<unsigned>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        value |= static_cast<unsigned>(c - 'A' + 10);
      } else {
        fail("expected four hex digits after \\u");
      }
    }
    return value;
  }

  static void append_utf8(std::string& out, unsigned code_point) {
    if (code_point < 0x80) {
      out += static_cast<char>(code_point);
    } else if (code_point < 0x800) {
      out += static_cast<char>(0xC0 | (code_point >> 6));
      out += static_cast<char>(0x80 | (code_point & 0x3F));
    } else if (code_point < 0x10000) {
      out += static_cast<char>(0xE0 | (code_point >> 12));
      out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code_point & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code_point >> 18));
      out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code_point & 0x3F));
    }
  }

  unsigned escaped_code_point() {
    const unsigned high = hex4();
    if (high < 0xD800 || high > 0xDFFF) return high;
    if (high > 0xDBFF || text_.substr(at_, 2) != "\\u") fail("unpaired UTF-16 surrogate");
    at_ += 2;
    const unsigned low = hex4();
    if (low < 0xDC00 || low > 0xDFFF) fail("unpaired UTF-16 surrogate");
    return 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
  }

  std::string parse_string() {
    ++at_;  // '"'
    std::string out;
    for (;;) {
      if (at_ >= text_.size()) fail("unterminated string");
      const char c = text_[at_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) fail("unterminated string");
      const char e = text_[at_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          append_utf8(out, escaped_code_point());
          break;
        default:
          --at_;
          fail(std::string("unknown escape \\") + e);
      }
    }
  }

  std::string_view text_;
  const std::string& source_;
  std::size_t at_ = 0;
  std::size_t counted_ = 0;
  std::size_t line_ = 1;
  std::size_t column_ = 1;
};

JsonValue parse_json(std::string_view text, const std::string& source) {
  return JsonParser(text, source).parse_document();
}

JsonValue read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open '" + path + "' for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw IoError("cannot read '" + path + "'");
  return parse_json(text.str(), path);
}

}  // namespace zt::data
