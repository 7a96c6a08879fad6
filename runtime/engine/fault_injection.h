// Deliberate failures for testing failure handling end to end, set by the environment:
//   ZEROTRAIN_FAULT="rank=1,step=2,exit=3"    rank 1 exits with status 3 before step 2
//   ZEROTRAIN_FAULT="rank=1,step=2,signal=9"  rank 1 kills itself with SIGKILL
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace zt::engine {

struct FaultPlan {
  int rank = 0;
  std::int64_t step = 0;
  int exit_status = 0;  // used when signal == 0
  int signal = 0;
};

// Parses a ZEROTRAIN_FAULT value; throws UsageError naming the variable when malformed.
FaultPlan parse_fault_plan(std::string_view text);
// The plan from the environment, if ZEROTRAIN_FAULT is set.
std::optional<FaultPlan> fault_plan_from_env();
// Carries out the plan when it names this rank and step.
void maybe_inject_fault(const std::optional<FaultPlan>& plan, int rank, std::int64_t step);

}  // namespace zt::engine
