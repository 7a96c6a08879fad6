// Validation of TOML documents and --set overrides against the schema. The only file that
// walks TOML nodes: every value is checked here, with its source position, and written into
// the typed Config; nothing downstream sees TOML.
#include "core/config/config_loader.h"

#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>
#include <variant>

#include "core/config/byte_size.h"
#include "core/config/config_enums.h"
#include "core/config/config_internal.h"
#include "core/config/config_schema.h"
#include "core/error.h"

namespace zt {
namespace {

using config_internal::did_you_mean;
using config_internal::format_float;
using config_internal::quote_string;

// "file:line:column", or just "file" where TOML++ knows no position.
std::string position(std::string_view source, const toml::source_region& region) {
  std::string text(source);
  if (region.begin.line == 0) return text;
  return text + ":" + std::to_string(region.begin.line) + ":" + std::to_string(region.begin.column);
}

std::string syntax_message(std::string_view source, const toml::parse_error& error) {
  return position(source, error.source()) + ": syntax error: " + std::string(error.description());
}

// The document, or the message of its syntax error.
std::variant<toml::table, std::string> parse_toml(std::string_view text, std::string_view source) {
#if TOML_EXCEPTIONS
  try {
    return toml::parse(text, std::string_view{source});
  } catch (const toml::parse_error& error) {
    return syntax_message(source, error);
  }
#else
  toml::parse_result result = toml::parse(text, std::string_view{source});
  if (!result) return syntax_message(source, result.error());
  return std::move(result).table();
#endif
}

toml::table parse_document(std::string_view text, std::string_view source) {
  auto parsed = parse_toml(text, source);
  if (auto* error = std::get_if<std::string>(&parsed)) throw ConfigError(*error);
  return std::move(std::get<toml::table>(parsed));
}

// What a node is, for "got ..." in messages: `a string ("fast")`, `an integer (4)`.
std::string describe_node(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "a string (" + quote_string(*node.value_exact<std::string>()) + ")";
    case toml::node_type::integer:
      return "an integer (" + std::to_string(*node.value_exact<std::int64_t>()) + ")";
    case toml::node_type::floating_point:
      return "a float (" + format_float(*node.value_exact<double>()) + ")";
    case toml::node_type::boolean:
      return std::string("a boolean (") + (*node.value_exact<bool>() ? "true" : "false") + ")";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

// A value read as a key's type, or the message saying why it is not one.
struct Converted {
  std::optional<KeyValue> value;
  std::string error;
};

Converted type_error(const KeySpec& key, const std::string& got) {
  return {std::nullopt, "expected " + describe_key_type(key) + ", got " + got};
}

// An array of non-empty strings, none holding a newline, as one string joined by '\n'
// (KeySpec::string_list).
Converted join_string_array(const KeySpec& key, const toml::array& array) {
  std::string joined;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const auto text = array[i].value_exact<std::string>();
    if (!text || text->empty() || text->find('\n') != std::string::npos) {
      return type_error(key, "an array whose element " + std::to_string(i) + " is " +
                                 (text ? (text->empty() ? std::string("empty")
                                                        : std::string("a string with a newline"))
                                       : describe_node(array[i])));
    }
    joined += (i == 0 ? "" : "\n") + *text;
  }
  if (array.size() == 0) return type_error(key, "an empty array");
  return {joined, {}};
}

// Strictly typed: an integer may stand for a float (1 -> 1.0), nothing else converts.
Converted convert_node(const KeySpec& key, const toml::node& node) {
  switch (key.type) {
    case KeyType::kInt:
      if (auto value = node.value_exact<std::int64_t>()) return {*value, {}};
      break;
    case KeyType::kFloat:
      if (auto value = node.value_exact<double>()) return {*value, {}};
      if (auto value = node.value_exact<std::int64_t>()) {
        return {static_cast<double>(*value), {}};
      }
      break;
    case KeyType::kBool:
      if (auto value = node.value_exact<bool>()) return {*value, {}};
      break;
    case KeyType::kString:
      if (const auto* array = node.as_array(); array != nullptr && key.string_list) {
        return join_string_array(key, *array);
      }
      if (auto value = node.value_exact<std::string>()) return {*value, {}};
      break;
    case KeyType::kEnum:
      if (auto value = node.value_exact<std::string>()) return {*value, {}};
      break;
    case KeyType::kSize:
      if (auto value = node.value_exact<std::int64_t>()) return {*value, {}};
      if (auto text = node.value_exact<std::string>()) {
        if (auto bytes = parse_byte_size(*text)) return {*bytes, {}};
      }
      break;
  }
  return type_error(key, describe_node(node));
}

// Checks `converted` against the key's range and enum names and stores it; `where` starts
// the message ("file:line:col" or "--set k=v").
void assign_value(const KeySpec& key, const Converted& converted, const std::string& where,
                  Config& config) {
  std::optional<std::string> error =
      converted.value ? check_key_value(key, *converted.value) : converted.error;
  if (error) throw ConfigError(where + ": " + key.full_name() + ": " + *error);
  key.assign(config, *converted.value);
  config.origins.set(key.full_name(), where);
}

bool is_planned_section(std::string_view name) {
  for (std::string_view planned : planned_config_sections()) {
    if (planned == name) return true;
  }
  return false;
}

[[noreturn]] void throw_unknown_top_level(std::string_view source, const toml::key& name,
                                          const toml::node& node) {
  const std::string where = position(source, name.source());
  if (!node.is_table()) {
    throw ConfigError(where + ": unknown key '" + std::string(name.str()) + "'" +
                      did_you_mean(config_internal::suggest_key("", name.str())));
  }
  if (is_planned_section(name.str())) {
    throw ConfigError(where + ": unknown section '" + std::string(name.str()) +
                      "': it is planned but has no keys in this version");
  }
  throw ConfigError(where + ": unknown section '" + std::string(name.str()) + "'" +
                    did_you_mean(config_internal::suggest_section(name.str())));
}

void throw_if_retired(const std::string& where, std::string_view section, std::string_view name) {
  if (const RetiredKey* retired = find_retired_config_key(section, name)) {
    throw ConfigError(where + ": " + std::string(retired->full_name) +
                      " was removed: " + std::string(retired->instead));
  }
}

void apply_section(std::string_view source, const SectionSpec& section, const toml::table& table,
                   Config& config) {
  for (auto&& [name, node] : table) {
    const KeySpec* key = find_config_key(section.name, name.str());
    if (key == nullptr) {
      throw_if_retired(position(source, name.source()), section.name, name.str());
      const std::string full_name = section.name + "." + std::string(name.str());
      throw ConfigError(position(source, name.source()) + ": unknown " +
                        (node.is_table() ? "table '" : "key '") + full_name + "'" +
                        did_you_mean(config_internal::suggest_key(section.name, name.str())));
    }
    assign_value(*key, convert_node(*key, node), position(source, node.source()), config);
  }
}

void apply_document(std::string_view source, const toml::table& root, Config& config) {
  for (auto&& [name, node] : root) {
    const SectionSpec* section = find_config_section(name.str());
    if (section == nullptr) throw_unknown_top_level(source, name, node);
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      throw ConfigError(position(source, node.source()) + ": '" + section->name +
                        "' must be a table (a [" + section->name + "] section), got " +
                        describe_node(node));
    }
    apply_section(source, *section, *table, config);
  }
}

std::string_view trim(std::string_view text) {
  const std::size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  const std::size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

// The value text of an override as a key's type. Parsed as a TOML value first; for string,
// enum and size keys a text that is not a TOML string (or, for sizes, integer) is taken as
// a bare word, so --set run.dir=out/x and --set zero.reduce_bucket_size=1MiB work.
Converted convert_override_value(const KeySpec& key, std::string_view text) {
  // Not a TOML value (a syntax error) leaves `node` null: maybe a bare word, else reported
  // below with the full expectation.
  auto document = parse_toml("value = " + std::string(text), "--set");
  const auto* table = std::get_if<toml::table>(&document);
  const toml::node* node = table && table->size() == 1 ? table->get("value") : nullptr;
  const bool wordy =
      key.type == KeyType::kString || key.type == KeyType::kEnum || key.type == KeyType::kSize;
  const bool typed_as_word =
      node != nullptr && (node->is_string() || (key.type == KeyType::kSize && node->is_integer()));
  const bool quoted = !text.empty() && (text.front() == '"' || text.front() == '\'');
  const bool list = key.string_list && node != nullptr && node->is_array();
  if (wordy && !typed_as_word && !quoted && !list) {
    if (key.type != KeyType::kSize) return {std::string(text), {}};
    if (auto bytes = parse_byte_size(text)) return {*bytes, {}};
    return type_error(key, "'" + std::string(text) + "'");
  }
  if (node == nullptr) {
    return {std::nullopt,
            "expected " + describe_key_expectation(key) + ", got '" + std::string(text) + "'"};
  }
  return convert_node(key, *node);
}

void apply_override(const std::string& override_text, Config& config) {
  const std::string where = "--set " + override_text;
  const std::size_t equals = override_text.find('=');
  const std::string_view path =
      trim(std::string_view(override_text).substr(0, std::min(equals, override_text.size())));
  if (equals == std::string::npos || path.empty()) {
    throw ConfigError(where + ": expected section.key=value, as in --set optimizer.lr=0.01");
  }
  const std::size_t dot = path.find('.');
  const std::string_view section = dot == std::string_view::npos ? "" : path.substr(0, dot);
  const std::string_view name = dot == std::string_view::npos ? path : path.substr(dot + 1);
  const KeySpec* key = find_config_key(section, name);
  if (key == nullptr) {
    throw_if_retired(where, section, name);
    throw ConfigError(where + ": unknown key '" + std::string(path) + "'" +
                      did_you_mean(config_internal::suggest_key(section, name)));
  }
  const std::string_view value = trim(std::string_view(override_text).substr(equals + 1));
  assign_value(*key, convert_override_value(*key, value), where, config);
}

// Every key at the schema's default, before derive_defaults.
Config schema_defaults() {
  Config config;
  for (const SectionSpec& section : config_schema()) {
    for (const KeySpec& key : section.keys) {
      ZT_CHECK(!check_key_value(key, key.default_value), key.full_name() + ": bad default");
      key.assign(config, key.default_value);
    }
  }
  config.source = "<defaults>";
  return config;
}

// Values that follow from others when left at their defaults.
void derive_defaults(Config& config) {
  if (config.run.dir.empty()) {
    config.run.dir = "runs/" + std::string(config_name(config.model.type));
  }
}

}  // namespace

Config default_config() {
  Config config = schema_defaults();
  derive_defaults(config);
  return config;
}

Config parse_config_text(std::string_view toml_text, std::string_view source_name,
                         const std::vector<std::string>& overrides) {
  Config config = schema_defaults();
  config.source = std::string(source_name);
  apply_document(source_name, parse_document(toml_text, source_name), config);
  for (const std::string& override_text : overrides) apply_override(override_text, config);
  derive_defaults(config);
  return config;
}

Config load_config_file(const std::filesystem::path& path,
                        const std::vector<std::string>& overrides) {
  const std::string name = path.string();
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    throw ConfigError(name + ": cannot read config file: no such file");
  }
  if (!std::filesystem::is_regular_file(path, error)) {
    throw ConfigError(name + ": cannot read config file: not a regular file");
  }
  std::ifstream file(path, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  if (!file.is_open() || file.bad()) throw ConfigError(name + ": cannot read config file");
  return parse_config_text(text, name, overrides);
}

}  // namespace zt
