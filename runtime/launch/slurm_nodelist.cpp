// expand_slurm_nodelist: splitting a host list at its top-level commas and multiplying out
// each item's bracketed number sets.
#include "runtime/launch/slurm_nodelist.h"

#include <charconv>
#include <cstddef>
#include <cstdint>

#include "core/error.h"

namespace zt::launch {
namespace {

constexpr std::size_t kMaxHosts = std::size_t{1} << 20;

class NodelistParser {
 public:
  NodelistParser(std::string_view list, const std::string& variable)
      : list_(list), variable_(variable) {}

  std::vector<std::string> expand() {
    if (list_.empty()) fail("it is empty");
    std::vector<std::string> hosts;
    for (std::string_view item : split_items()) {
      if (item.empty()) fail("it has an empty item");
      std::vector<std::string> expanded{""};
      expand_item(item, expanded);
      for (std::string& host : expanded) hosts.push_back(std::move(host));
      if (hosts.size() > kMaxHosts) fail("it names more than a million hosts");
    }
    return hosts;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw UsageError("environment variable " + variable_ + "='" + std::string(list_) +
                     "': not a Slurm host list (" + why +
                     "); expected a form such as 'node[1-3,5],login7'");
  }

  // The items between commas that are outside brackets.
  std::vector<std::string_view> split_items() const {
    std::vector<std::string_view> items;
    std::size_t start = 0;
    int depth = 0;
    for (std::size_t i = 0; i < list_.size(); ++i) {
      if (list_[i] == '[') {
        if (++depth > 1) fail("brackets inside brackets");
      } else if (list_[i] == ']') {
        if (--depth < 0) fail("a ']' without its '['");
      } else if (list_[i] == ',' && depth == 0) {
        items.push_back(list_.substr(start, i - start));
        start = i + 1;
      }
    }
    if (depth != 0) fail("a '[' without its ']'");
    items.push_back(list_.substr(start));
    return items;
  }

  // Appends to every partial host in `hosts` each expansion of `item` (prefix, optional
  // bracket, rest), bracket by bracket.
  void expand_item(std::string_view item, std::vector<std::string>& hosts) const {
    while (!item.empty()) {
      const std::size_t open = item.find('[');
      const std::string_view prefix = item.substr(0, open);
      for (std::string& host : hosts) host.append(prefix);
      if (open == std::string_view::npos) return;
      const std::size_t close = item.find(']', open);
      const std::vector<std::string> numbers = expand_set(item.substr(open + 1, close - open - 1));
      if (hosts.size() * numbers.size() > kMaxHosts) fail("it names more than a million hosts");
      std::vector<std::string> multiplied;
      multiplied.reserve(hosts.size() * numbers.size());
      for (const std::string& host : hosts) {
        for (const std::string& number : numbers) multiplied.push_back(host + number);
      }
      hosts = std::move(multiplied);
      item = item.substr(close + 1);
    }
  }

  // "1-3,05,7-8" -> {"1","2","3","05","7","8"}; a range keeps the width of its first bound.
  std::vector<std::string> expand_set(std::string_view set) const {
    std::vector<std::string> numbers;
    while (true) {
      const std::size_t comma = set.find(',');
      const std::string_view part = set.substr(0, comma);
      const std::size_t dash = part.find('-');
      const std::string_view low_text = part.substr(0, dash);
      const std::uint64_t low = parse_number(low_text);
      const std::uint64_t high =
          dash == std::string_view::npos ? low : parse_number(part.substr(dash + 1));
      if (high < low) fail("the range " + std::string(part) + " runs backwards");
      if (high - low >= kMaxHosts) fail("it names more than a million hosts");
      for (std::uint64_t n = low; n <= high; ++n) {
        std::string digits = std::to_string(n);
        if (digits.size() < low_text.size()) {
          digits.insert(0, low_text.size() - digits.size(), '0');
        }
        numbers.push_back(std::move(digits));
      }
      if (comma == std::string_view::npos) return numbers;
      set = set.substr(comma + 1);
    }
  }

  std::uint64_t parse_number(std::string_view text) const {
    std::uint64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end) {
      fail("'" + std::string(text) + "' in brackets is not a number");
    }
    return value;
  }

  std::string_view list_;
  const std::string& variable_;
};

}  // namespace

std::vector<std::string> expand_slurm_nodelist(std::string_view list, const std::string& variable) {
  return NodelistParser(list, variable).expand();
}

}  // namespace zt::launch
