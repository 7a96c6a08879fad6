// StoreTable: a hash map of values plus, per key, the waiters parked on it.
#include "comm/store/store_table.h"

#include <algorithm>

#include "comm/store/store_values.h"

namespace zt::comm {

void StoreTable::set(const std::string& key, std::string value) { values_[key] = std::move(value); }

const std::string* StoreTable::find(const std::string& key) const {
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

std::int64_t StoreTable::add(const std::string& key, std::int64_t delta) {
  auto it = values_.find(key);
  const std::int64_t current = it == values_.end() ? 0 : parse_counter(key, it->second);
  const std::int64_t result = add_to_counter(key, current, delta);
  values_[key] = std::to_string(result);
  return result;
}

std::string StoreTable::compare_set(const std::string& key, const std::string& expected,
                                    const std::string& desired) {
  auto it = values_.find(key);
  if (it == values_.end()) {
    if (!expected.empty()) return std::string();
    values_.emplace(key, desired);
    return desired;
  }
  if (it->second == expected) it->second = desired;
  return it->second;
}

bool StoreTable::erase(const std::string& key) { return values_.erase(key) > 0; }

std::vector<std::string> StoreTable::missing(const std::vector<std::string>& keys) const {
  std::vector<std::string> result;
  for (const auto& key : keys) {
    if (!values_.count(key)) result.push_back(key);
  }
  return result;
}

void StoreTable::park(const std::string& key, WaiterId waiter) {
  parked_[key].push_back(waiter);
  ++parked_count_;
}

void StoreTable::unpark(const std::string& key, WaiterId waiter) {
  auto it = parked_.find(key);
  if (it == parked_.end()) return;
  auto& waiters = it->second;
  auto pos = std::find(waiters.begin(), waiters.end(), waiter);
  if (pos == waiters.end()) return;
  waiters.erase(pos);
  --parked_count_;
  if (waiters.empty()) parked_.erase(it);
}

std::vector<StoreTable::WaiterId> StoreTable::take_parked(const std::string& key) {
  auto it = parked_.find(key);
  if (it == parked_.end()) return {};
  std::vector<WaiterId> waiters = std::move(it->second);
  parked_.erase(it);
  parked_count_ -= waiters.size();
  return waiters;
}

std::vector<std::string> StoreTable::parked_keys() const {
  std::vector<std::string> keys;
  keys.reserve(parked_.size());
  for (const auto& [key, waiters] : parked_) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace zt::comm
