// RendezvousStatusStore: sliced waits with a status line between slices.
#include "comm/gloo/rendezvous_status_store.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "comm/rendezvous_keys.h"
#include "comm/store/store_values.h"
#include "core/error.h"

namespace zt::comm {
namespace {

using Clock = std::chrono::steady_clock;

std::string seconds_text(std::chrono::milliseconds t) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(t.count()) / 1000.0);
  return text;
}

}  // namespace

RendezvousStatusStore::RendezvousStatusStore(Store& inner, std::string key_prefix, int rank,
                                             std::chrono::milliseconds status_interval)
    : inner_(inner),
      key_prefix_(std::move(key_prefix)),
      rank_(rank),
      status_interval_(status_interval) {}

void RendezvousStatusStore::set(const std::string& key, const std::string& value) {
  inner_.set(key, value);
}

std::optional<std::string> RendezvousStatusStore::try_get(const std::string& key) {
  return inner_.try_get(key);
}

std::string RendezvousStatusStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  wait({key}, timeout);
  return inner_.get(key, timeout);  // set by now: returns at once
}

std::int64_t RendezvousStatusStore::add(const std::string& key, std::int64_t delta) {
  return inner_.add(key, delta);
}

std::string RendezvousStatusStore::compare_set(const std::string& key, const std::string& expected,
                                               const std::string& desired) {
  return inner_.compare_set(key, expected, desired);
}

bool RendezvousStatusStore::delete_key(const std::string& key) { return inner_.delete_key(key); }

void RendezvousStatusStore::wait(const std::vector<std::string>& keys,
                                 std::chrono::milliseconds timeout) {
  if (status_interval_.count() <= 0) {
    inner_.wait(keys, timeout);
    return;
  }
  const auto deadline = Clock::now() + timeout;
  std::chrono::milliseconds waited{0};  // the slices spent, as the status lines count them
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    const auto slice = std::clamp(left, std::chrono::milliseconds(0), status_interval_);
    try {
      inner_.wait(keys, slice);
      return;
    } catch (const TimeoutError&) {
      if (slice < left) {
        waited += slice;
        report(keys, waited, timeout);
        continue;
      }
      // The whole timeout is spent: name whom it waited for over all of it, not one slice.
      const std::string missing = awaited(keys);
      if (missing.empty()) throw;
      throw TimeoutError("rank " + std::to_string(rank_) + " waited " + seconds_text(timeout) +
                         " (runtime.comm_timeout_s) in the rendezvous for " + missing +
                         "; did their node's launcher start?");
    }
  }
}

std::string RendezvousStatusStore::awaited(const std::vector<std::string>& keys) {
  std::vector<std::string> missing;
  std::string ranks;
  for (const std::string& key : keys) {
    if (inner_.try_get(key)) continue;
    missing.push_back(key);
    if (const std::optional<int> rank = rank_of_key(key_prefix_, key)) {
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(*rank);
    }
  }
  if (missing.empty()) return "";
  const std::string whom = ranks.empty() ? std::string("other ranks")
                                         : (missing.size() == 1 ? "rank " : "ranks ") + ranks;
  return whom + " (store key" + (missing.size() == 1 ? " " : "s ") + join_keys(missing) + ")";
}

void RendezvousStatusStore::report(const std::vector<std::string>& keys,
                                   std::chrono::milliseconds waited,
                                   std::chrono::milliseconds timeout) {
  const std::string missing = awaited(keys);
  if (missing.empty()) return;  // arrived just now; the next slice returns at once
  std::fprintf(stderr, "zerotrain: rank %d: %s of %s in the rendezvous, waiting for %s\n", rank_,
               seconds_text(waited).c_str(), seconds_text(timeout).c_str(), missing.c_str());
  std::fflush(stderr);
}

}  // namespace zt::comm
