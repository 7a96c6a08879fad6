// What the schema says about one value: lookups, the wording of expectations ("a float
// > 0 and <= 10"), range and enum checks, and TOML literals for docs and the writer.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/config/byte_size.h"
#include "core/config/config_internal.h"
#include "core/config/config_schema.h"
#include "core/error.h"

namespace zt {
namespace {

using config_internal::format_float;
using config_internal::quote_string;

// A bound as the key's users write it: 1024 bytes as "1 KiB", 0 as "0", 0.5 as "0.5".
std::string format_bound(const KeySpec& key, double bound) {
  if (key.type == KeyType::kSize) return format_byte_size(static_cast<std::int64_t>(bound));
  if (key.type == KeyType::kInt || bound == std::floor(bound)) {
    return std::to_string(static_cast<std::int64_t>(bound));
  }
  return format_float(bound);
}

// A string-list value (held joined by '\n'): one entry as a TOML string, more as an array.
std::string format_string_list(const std::string& joined) {
  if (joined.find('\n') == std::string::npos) return quote_string(joined);
  std::string out = "[";
  std::size_t begin = 0;
  while (begin <= joined.size()) {
    const std::size_t end = std::min(joined.find('\n', begin), joined.size());
    out += (begin == 0 ? "" : ", ") + quote_string(joined.substr(begin, end - begin));
    begin = end + 1;
  }
  return out + "]";
}

std::string enum_list(const KeySpec& key) {
  std::string list;
  for (const std::string& name : key.enum_values) {
    if (!list.empty()) list += ", ";
    list += quote_string(name);
  }
  return list;
}

// `value` in the words of a message: sizes as "512 B", other numbers as literals.
std::string format_got(const KeySpec& key, const KeyValue& value) {
  if (key.type == KeyType::kSize) return format_byte_size(std::get<std::int64_t>(value));
  return format_key_value(key, value);
}

double as_number(const KeyValue& value) {
  if (const auto* integer = std::get_if<std::int64_t>(&value)) {
    return static_cast<double>(*integer);
  }
  return std::get<double>(value);
}

}  // namespace

bool Range::contains(double value) const {
  if (std::isnan(value)) return false;
  if (min && (min_exclusive ? value <= *min : value < *min)) return false;
  if (max && (max_exclusive ? value >= *max : value > *max)) return false;
  return true;
}

const SectionSpec* find_config_section(std::string_view name) {
  for (const SectionSpec& section : config_schema()) {
    if (section.name == name) return &section;
  }
  return nullptr;
}

const KeySpec* find_config_key(std::string_view section, std::string_view name) {
  const SectionSpec* spec = find_config_section(section);
  if (spec == nullptr) return nullptr;
  for (const KeySpec& key : spec->keys) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

std::string describe_key_type(const KeySpec& key) {
  switch (key.type) {
    case KeyType::kInt:
      return "an integer";
    case KeyType::kFloat:
      return "a float";
    case KeyType::kBool:
      return "a boolean (true or false)";
    case KeyType::kString:
      if (key.string_list) return "a string or an array of strings";
      return key.allow_empty ? "a string" : "a non-empty string";
    case KeyType::kEnum:
      return "one of " + enum_list(key);
    case KeyType::kSize:
      return "a size: a byte count as an integer, or a string like \"512MiB\", \"8GB\", "
             "\"1.5GiB\", \"100B\" (units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)";
  }
  ZT_CHECK(false, "unhandled KeyType");
  return {};
}

std::string describe_key_range(const KeySpec& key) {
  const Range& range = key.range;
  std::string text;
  if (range.min) text = (range.min_exclusive ? "> " : ">= ") + format_bound(key, *range.min);
  if (range.max) {
    if (!text.empty()) text += " and ";
    text += (range.max_exclusive ? "< " : "<= ") + format_bound(key, *range.max);
  }
  return text;
}

std::string describe_key_expectation(const KeySpec& key) {
  const std::string range = describe_key_range(key);
  if (key.type == KeyType::kSize) return range.empty() ? "a size" : "a size " + range;
  const std::string type = describe_key_type(key);
  return range.empty() ? type : type + " " + range;
}

std::string format_key_value(const KeySpec& key, const KeyValue& value) {
  switch (key.type) {
    case KeyType::kInt:
      return std::to_string(std::get<std::int64_t>(value));
    case KeyType::kFloat:
      return format_float(std::get<double>(value));
    case KeyType::kBool:
      return std::get<bool>(value) ? "true" : "false";
    case KeyType::kString:
      if (key.string_list) return format_string_list(std::get<std::string>(value));
      return quote_string(std::get<std::string>(value));
    case KeyType::kEnum:
      return quote_string(std::get<std::string>(value));
    case KeyType::kSize: {
      // The unit form only where it is exact, so the file reads back to the same bytes.
      const std::int64_t bytes = std::get<std::int64_t>(value);
      const std::string text = format_byte_size(bytes);
      if (bytes != 0 && parse_byte_size(text) == bytes) return quote_string(text);
      return std::to_string(bytes);
    }
  }
  ZT_CHECK(false, "unhandled KeyType");
  return {};
}

std::optional<std::string> check_key_value(const KeySpec& key, const KeyValue& value) {
  switch (key.type) {
    case KeyType::kInt:
    case KeyType::kSize:
    case KeyType::kFloat: {
      const double number = as_number(value);
      if (std::isfinite(number) && key.range.contains(number)) return std::nullopt;
      return "expected " + describe_key_expectation(key) + ", got " + format_got(key, value);
    }
    case KeyType::kBool:
      return std::nullopt;
    case KeyType::kString: {
      const std::string& text = std::get<std::string>(value);
      // TOML is UTF-8: a --set value that is not could not be written to config.toml.
      if (const auto offset = config_internal::invalid_utf8_offset(text)) {
        return "expected UTF-8 text, got a string whose byte " + std::to_string(*offset) +
               " is not valid UTF-8";
      }
      if (key.allow_empty || !text.empty()) return std::nullopt;
      return "expected a non-empty string, got \"\"";
    }
    case KeyType::kEnum: {
      const std::string& name = std::get<std::string>(value);
      for (const std::string& allowed : key.enum_values) {
        if (allowed == name) return std::nullopt;
      }
      const auto suggestion = config_internal::nearest_word(name, key.enum_values);
      return "expected one of " + enum_list(key) + ", got " + quote_string(name) +
             (suggestion ? "; did you mean " + quote_string(*suggestion) + "?" : "");
    }
  }
  ZT_CHECK(false, "unhandled KeyType");
  return {};
}

}  // namespace zt
