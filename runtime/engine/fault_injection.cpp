// ZEROTRAIN_FAULT parsing and execution.
#include "runtime/engine/fault_injection.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/error.h"

namespace zt::engine {
namespace {

int parse_int(std::string_view text, std::string_view field) {
  try {
    std::size_t used = 0;
    const int value = std::stoi(std::string(text), &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw UsageError("ZEROTRAIN_FAULT: " + std::string(field) + "=" + std::string(text) +
                   " is not an integer");
}

std::optional<comm::CollectiveKind> collective_kind_named(std::string_view name) {
  for (std::size_t k = 0; k < comm::kCollectiveKindCount; ++k) {
    const auto kind = static_cast<comm::CollectiveKind>(k);
    if (comm::collective_name(kind) == name) return kind;
  }
  return std::nullopt;
}

bool fires_in_this_attempt(const FaultPlan& plan) {
  static const int attempt = restart_count_from_env();
  return plan.attempt == attempt || plan.attempt == -1;
}

}  // namespace

FaultPlan parse_fault_plan(std::string_view text) {
  FaultPlan plan;
  bool has_action = false;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw UsageError("ZEROTRAIN_FAULT: expected key=value items, got '" + std::string(item) +
                       "' (example: rank=1,step=2,exit=3)");
    }
    const std::string_view key = item.substr(0, eq);
    if (key == "at") {
      plan.at = std::string(item.substr(eq + 1));
      constexpr std::string_view kPhases[] = {"save-staged", "save-writing", "save-written",
                                              "save-manifest", "backward"};
      if (std::find(std::begin(kPhases), std::end(kPhases), plan.at) == std::end(kPhases)) {
        throw UsageError("ZEROTRAIN_FAULT: at=" + plan.at +
                         " is not a phase (save-staged, save-writing, save-written, "
                         "save-manifest, backward)");
      }
      continue;
    }
    if (key == "skip") {
      plan.skip = std::string(item.substr(eq + 1));
      if (!collective_kind_named(plan.skip)) {
        throw UsageError("ZEROTRAIN_FAULT: skip=" + plan.skip +
                         " is not a collective (all_reduce, reduce_scatter, all_gather, "
                         "all_to_all, broadcast, barrier)");
      }
      has_action = true;
      continue;
    }
    const int value = parse_int(item.substr(eq + 1), key);
    if (key == "rank") {
      plan.rank = value;
    } else if (key == "step") {
      plan.step = value;
    } else if (key == "exit") {
      plan.exit_status = value;
      has_action = true;
    } else if (key == "signal") {
      plan.signal = value;
      has_action = true;
    } else if (key == "sleep") {
      if (value <= 0) throw UsageError("ZEROTRAIN_FAULT: sleep=N needs N > 0 seconds");
      plan.sleep_s = value;
      has_action = true;
    } else if (key == "attempt") {
      plan.attempt = value;
    } else if (key == "overflow") {
      plan.overflow = value != 0;
      has_action = plan.overflow;
    } else {
      throw UsageError("ZEROTRAIN_FAULT: unknown key '" + std::string(key) +
                       "' (known: rank, step, exit, signal, sleep, skip, overflow, at, attempt)");
    }
  }
  if (!has_action) {
    throw UsageError("ZEROTRAIN_FAULT: needs exit=N, signal=N, sleep=N, skip=OP or overflow=1");
  }
  return plan;
}

std::optional<FaultPlan> fault_plan_from_env() {
  const char* text = std::getenv("ZEROTRAIN_FAULT");  // read once, before threads start
  if (text == nullptr || *text == '\0') return std::nullopt;
  return parse_fault_plan(text);
}

int restart_count_from_env() {
  const char* text = std::getenv("ZEROTRAIN_RESTART_COUNT");
  return text == nullptr ? 0 : std::atoi(text);
}

void maybe_inject_fault(const std::optional<FaultPlan>& plan, int rank, std::int64_t step,
                        std::string_view phase) {
  if (!plan || plan->overflow || !plan->skip.empty() || plan->rank != rank || plan->step != step ||
      plan->at != phase) {
    return;
  }
  if (!fires_in_this_attempt(*plan)) return;
  std::fprintf(stderr, "zerotrain: injected fault (ZEROTRAIN_FAULT) on rank %d at step %lld%s%s\n",
               rank, static_cast<long long>(step), phase.empty() ? "" : ", ",
               std::string(phase).c_str());
  std::fflush(stderr);
  if (plan->sleep_s > 0) {
    std::this_thread::sleep_for(std::chrono::seconds(plan->sleep_s));
    return;
  }
  if (plan->signal != 0) std::raise(plan->signal);
  std::_Exit(plan->exit_status);
}

std::shared_ptr<comm::OpSkipFault> op_skip_fault_for(const std::optional<FaultPlan>& plan, int rank,
                                                     const MemoryTracker* phases) {
  if (!plan || plan->skip.empty() || plan->rank != rank || !fires_in_this_attempt(*plan)) {
    return nullptr;
  }
  return std::make_shared<comm::OpSkipFault>(*collective_kind_named(plan->skip), plan->step,
                                             phases);
}

}  // namespace zt::engine
