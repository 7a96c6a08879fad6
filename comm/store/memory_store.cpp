// MemoryStore: a map under one mutex, with a condition variable for waiters.
#include "comm/store/memory_store.h"

#include <algorithm>
#include <string>

#include "comm/store/store_values.h"
#include "core/error.h"

namespace zt::comm {
namespace {

// wait_for adds the timeout to now(): milliseconds::max() ("forever") would overflow into
// the past and time out at once, so clamp to 30 days.
std::chrono::milliseconds clamp_wait(std::chrono::milliseconds timeout) {
  return std::min<std::chrono::milliseconds>(timeout, std::chrono::hours(24 * 30));
}

TimeoutError timeout_error(std::chrono::milliseconds timeout,
                           const std::vector<std::string>& missing) {
  return TimeoutError("store: waited " + std::to_string(timeout.count()) +
                      " ms for keys that were never set: " + join_keys(missing));
}

}  // namespace

void MemoryStore::set(const std::string& key, const std::string& value) {
  {
    std::lock_guard lock(mutex_);
    values_[key] = value;
  }
  changed_.notify_all();
}

std::optional<std::string> MemoryStore::try_get(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string MemoryStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  // One lock from the wait to the read, so a delete in between cannot make the key vanish.
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, clamp_wait(timeout), [&] { return values_.count(key) > 0; })) {
    throw timeout_error(timeout, {key});
  }
  return values_.at(key);
}

std::int64_t MemoryStore::add(const std::string& key, std::int64_t delta) {
  std::int64_t result = 0;
  {
    std::lock_guard lock(mutex_);
    auto it = values_.find(key);
    const std::int64_t current = it == values_.end() ? 0 : parse_counter(key, it->second);
    result = add_to_counter(key, current, delta);
    values_[key] = std::to_string(result);
  }
  changed_.notify_all();
  return result;
}

std::string MemoryStore::compare_set(const std::string& key, const std::string& expected,
                                     const std::string& desired) {
  std::string result;
  {
    std::lock_guard lock(mutex_);
    auto it = values_.find(key);
    const bool matches = it == values_.end() ? expected.empty() : it->second == expected;
    if (matches) values_[key] = desired;
    result = values_.count(key) ? values_[key] : std::string();
  }
  changed_.notify_all();
  return result;
}

bool MemoryStore::delete_key(const std::string& key) {
  std::lock_guard lock(mutex_);
  return values_.erase(key) > 0;
}

void MemoryStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  const auto all_set = [&] {
    for (const auto& key : keys) {
      if (!values_.count(key)) return false;
    }
    return true;
  };
  if (!changed_.wait_for(lock, clamp_wait(timeout), all_set)) {
    std::vector<std::string> missing;
    for (const auto& key : keys) {
      if (!values_.count(key)) missing.push_back(key);
    }
    throw timeout_error(timeout, missing);
  }
}

}  // namespace zt::comm
