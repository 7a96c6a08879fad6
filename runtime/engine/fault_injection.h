// Deliberate failures for testing failure handling end to end, set by the environment:
//   ZEROTRAIN_FAULT="rank=1,step=2,exit=3"    rank 1 exits with status 3 before step 2
//   ZEROTRAIN_FAULT="rank=1,step=2,signal=9"  rank 1 kills itself with SIGKILL
//   ZEROTRAIN_FAULT="rank=1,step=2,overflow=1" rank 1's step-2 gradients become infinite
//                                              (tests fp16 overflow handling)
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
  bool overflow = false;  // poison the gradients instead of leaving the process

  bool poisons(int on_rank, std::int64_t at_step) const {
    return overflow && rank == on_rank && step == at_step;
  }
};

// Parses a ZEROTRAIN_FAULT value; throws UsageError naming the variable when malformed.
FaultPlan parse_fault_plan(std::string_view text);
// The plan from the environment, if ZEROTRAIN_FAULT is set.
std::optional<FaultPlan> fault_plan_from_env();
// Carries out an exit or signal plan when it names this rank and step (overflow plans are
// the trainer's to apply).
void maybe_inject_fault(const std::optional<FaultPlan>& plan, int rank, std::int64_t step);

}  // namespace zt::engine
