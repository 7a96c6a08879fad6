// Parsing and formatting of byte sizes (see byte_size.h). Parsing is exact: digits are
// accumulated in 128-bit integers so "1.5GiB" is 1610612736 bytes, not a rounded double.
#include "core/config/byte_size.h"

#include <array>
#include <cctype>
#include <cstdio>
#include <iterator>
#include <limits>

namespace zt {
namespace {

__extension__ using Int128 = __int128;

struct Unit {
  std::string_view name;
  std::int64_t bytes;
};

constexpr std::int64_t kKi = 1024;
constexpr std::int64_t kKilo = 1000;

// Binary units first and largest first within each kind: formatting an inexact size uses
// the first binary unit not larger than it.
constexpr std::array<Unit, 8> kUnits{{{"TiB", kKi* kKi* kKi* kKi},
                                      {"GiB", kKi* kKi* kKi},
                                      {"MiB", kKi* kKi},
                                      {"KiB", kKi},
                                      {"TB", kKilo* kKilo* kKilo* kKilo},
                                      {"GB", kKilo* kKilo* kKilo},
                                      {"MB", kKilo* kKilo},
                                      {"KB", kKilo}}};
constexpr std::size_t kBinaryUnitCount = 4;

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// Bytes per unit for a unit name; an empty name means bytes.
std::optional<std::int64_t> unit_bytes(std::string_view name) {
  if (name.empty() || equals_ignoring_case(name, "B")) return 1;
  for (const Unit& unit : kUnits) {
    if (equals_ignoring_case(name, unit.name)) return unit.bytes;
  }
  return std::nullopt;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Consumes a run of digits from the front of `text` into `value` (times 10 per digit),
// counting them; false once the value could no longer fit in an int64.
bool take_digits(std::string_view& text, Int128& value, int& count) {
  constexpr Int128 kCap = std::numeric_limits<std::int64_t>::max();
  while (!text.empty() && is_digit(text.front())) {
    value = value * 10 + (text.front() - '0');
    if (value > kCap) return false;
    text.remove_prefix(1);
    ++count;
  }
  return true;
}

}  // namespace

std::optional<std::int64_t> parse_byte_size(std::string_view text) {
  text = trim(text);
  Int128 whole = 0;
  int whole_digits = 0;
  if (!take_digits(text, whole, whole_digits) || whole_digits == 0) return std::nullopt;
  Int128 fraction = 0;
  int fraction_digits = 0;
  if (!text.empty() && text.front() == '.') {
    text.remove_prefix(1);
    // Digits past 18 cannot change a whole-byte result below INT64_MAX; they are dropped.
    std::string_view digits = text.substr(0, text.find_first_not_of("0123456789"));
    text.remove_prefix(digits.size());
    std::string_view kept = digits.substr(0, 18);
    if (!take_digits(kept, fraction, fraction_digits) || digits.empty()) return std::nullopt;
  }
  const std::optional<std::int64_t> unit = unit_bytes(trim(text));
  if (!unit) return std::nullopt;
  if (fraction != 0 && *unit == 1) return std::nullopt;  // no fractions of a byte
  Int128 scale = 1;
  for (int i = 0; i < fraction_digits; ++i) scale *= 10;
  const Int128 bytes = whole * *unit + fraction * *unit / scale;
  if (bytes > std::numeric_limits<std::int64_t>::max()) return std::nullopt;
  return static_cast<std::int64_t>(bytes);
}

std::string format_byte_size(std::int64_t bytes) {
  if (bytes < 0) {
    // Negative sizes only show up in differences; format the magnitude without overflow.
    if (bytes == std::numeric_limits<std::int64_t>::min()) return "-8388608 TiB";
    return "-" + format_byte_size(-bytes);
  }
  if (bytes == 0) return "0 B";
  // The exact form with the smallest number: 8000000000 is "8 GB", not "7812500 KiB";
  // binary units win ties because memory is counted in them.
  const Unit* exact = nullptr;
  for (const Unit& unit : kUnits) {
    if (bytes % unit.bytes == 0 && (exact == nullptr || unit.bytes > exact->bytes)) {
      exact = &unit;
    }
  }
  if (exact != nullptr)
    return std::to_string(bytes / exact->bytes) + " " + std::string(exact->name);
  if (bytes < kKi) return std::to_string(bytes) + " B";
  const Unit* unit = &kUnits[kBinaryUnitCount - 1];
  for (std::size_t i = 0; i < kBinaryUnitCount; ++i) {
    if (bytes >= kUnits[i].bytes) {
      unit = &kUnits[i];
      break;
    }
  }
  const double value = static_cast<double>(bytes) / static_cast<double>(unit->bytes);
  const int decimals = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  std::array<char, 48> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%.*f %s", decimals, value,
                std::string(unit->name).c_str());
  return buffer.data();
}

std::string format_approximate_bytes(std::int64_t byte_count) {
  double bytes = static_cast<double>(byte_count);
  static const char* const kUnitNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t unit = 0;
  while (bytes >= 1024.0 && unit + 1 < std::size(kUnitNames)) {
    bytes /= 1024.0;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof(text), "%.0f B", bytes);
  } else {
    std::snprintf(text, sizeof(text),
                  bytes < 10 ? "%.2f %s" : (bytes < 100 ? "%.1f %s" : "%.0f %s"), bytes,
                  kUnitNames[unit]);
  }
  return text;
}

}  // namespace zt
