// The one description of every config key: section, name, type, default, unit,
// range, documentation and the Config field it fills. Loading, docs/CONFIG.md and the
// effective-config writer all read this table; no other code lists keys.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/config/config.h"

namespace zt {

enum class KeyType { kInt, kFloat, kBool, kString, kEnum, kSize };

// A validated value: int and size keys hold std::int64_t (sizes in bytes), float keys
// double, bool keys bool, string and enum keys std::string (an enum by its file name).
using KeyValue = std::variant<std::int64_t, double, bool, std::string>;

// The allowed interval of an int, float or size key; a missing bound is unbounded.
struct Range {
  std::optional<double> min;
  std::optional<double> max;
  bool min_exclusive = false;
  bool max_exclusive = false;

  static Range any() { return {}; }
  static Range at_least(double bound) { return {bound, std::nullopt, false, false}; }
  static Range greater_than(double bound) { return {bound, std::nullopt, true, false}; }
  static Range between(double low, double high) { return {low, high, false, false}; }
  Range at_most(double bound) const { return {min, bound, min_exclusive, false}; }
  Range below(double bound) const { return {min, bound, min_exclusive, true}; }

  bool contains(double value) const;
};

struct KeySpec {
  std::string section;
  std::string name;
  KeyType type = KeyType::kInt;
  KeyValue default_value;
  std::string unit;                      // "steps", "seconds", "bytes"; empty if none
  Range range;                           // int, float and size keys
  std::vector<std::string> enum_values;  // enum keys: the accepted names
  bool allow_empty = true;               // string keys
  bool string_list = false;  // string keys: an array of strings too, held joined by '\n'
  // String keys that name files or directories: the saved config.toml holds them absolute
  // (each entry of a string_list), except the words in path_keywords ("latest").
  bool is_path = false;
  std::vector<std::string> path_keywords;
  std::vector<std::string> aliases;  // other frameworks' names, used only to suggest
  std::string doc;                   // one line for docs/CONFIG.md
  std::function<void(Config&, const KeyValue&)> assign;
  std::function<KeyValue(const Config&)> read;

  std::string full_name() const { return section + "." + name; }
};

struct SectionSpec {
  std::string name;
  std::string doc;
  std::vector<KeySpec> keys;
};

// Every section and key, in documentation order.
const std::vector<SectionSpec>& config_schema();

// Sections that are planned but have no keys yet; the loader refuses them like any
// unknown section, with a note saying so.
std::span<const std::string_view> planned_config_sections();

// A key an earlier version accepted and this one refuses, and what to write instead: the
// loader's error says so rather than only "unknown key".
struct RetiredKey {
  std::string_view full_name;  // "train.eval_batches"
  std::string_view instead;    // the replacement, as the error and docs/CONFIG.md say it
};
std::span<const RetiredKey> retired_config_keys();
const RetiredKey* find_retired_config_key(std::string_view section, std::string_view name);

const SectionSpec* find_config_section(std::string_view name);
const KeySpec* find_config_key(std::string_view section, std::string_view name);

// "an integer", "a float", "a boolean (true or false)", "a string", "one of "sgd", ...",
// "a size": what a value of the wrong type is told it should have been.
std::string describe_key_type(const KeySpec& key);

// The full expectation, type and range: "a float > 0 and <= 10", "a size >= 1 KiB".
std::string describe_key_expectation(const KeySpec& key);

// "> 0 and <= 10", ">= 1 KiB", or "" for an unbounded key.
std::string describe_key_range(const KeySpec& key);

// `value` as a TOML literal: 0.001, "adamw", true, "25 MiB" (sizes that are a whole
// number of a unit) or 1500 (other sizes).
std::string format_key_value(const KeySpec& key, const KeyValue& value);

// Checks a value of the key's C++ type against its range, enum names and emptiness:
// the error text ("expected a float > 0 and <= 10, got -0.1") or nullopt if valid.
std::optional<std::string> check_key_value(const KeySpec& key, const KeyValue& value);

}  // namespace zt
