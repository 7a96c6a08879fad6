// Deliberate failures for testing failure handling end to end, set by the environment:
//   ZEROTRAIN_FAULT="rank=1,step=2,exit=3"    rank 1 exits with status 3 before step 2
//   ZEROTRAIN_FAULT="rank=1,step=2,signal=9"  rank 1 kills itself with SIGKILL
//   ZEROTRAIN_FAULT="rank=1,step=2,overflow=1" rank 1's step-2 gradients become infinite
//                                              (tests fp16 overflow handling)
//   ZEROTRAIN_FAULT="rank=1,step=4,signal=9,at=save-writing"  during the checkpoint save after
//       step 4, at one of its phases: save-staged (the shards copied to host memory),
//       save-writing (half the rank's file written), save-written (the file complete, the
//       checkpoint not yet committed), save-manifest (rank 0: the manifest written, the
//       directory not yet renamed)
//   ZEROTRAIN_FAULT="rank=1,step=3,sleep=30,at=backward"  rank 1 sleeps 30 s as step 3's
//       first backward pass begins, and then goes on (a slow or hung rank: its peers wait
//       for it in a collective); `at` may also be empty (before the step) or a save phase
//   ZEROTRAIN_FAULT="rank=1,step=3,skip=all_gather"  rank 1 does not issue the first
//       all-gather of step 3 and goes on as if it had (a rank that took another branch; Note
//       [Skipping an op on purpose] in comm/skipping_communicator.h); any collective's name
//       (all_reduce, reduce_scatter, all_gather, all_to_all, broadcast, barrier)
// A plan fires in the first attempt of a job only, unless attempt=K names another, or
// attempt=-1 every one (zerotrain launch --max-restarts counts attempts in
// ZEROTRAIN_RESTART_COUNT).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "comm/skipping_communicator.h"

namespace zt::engine {

struct FaultPlan {
  int rank = 0;
  std::int64_t step = 0;
  int exit_status = 0;  // used when signal == 0
  int signal = 0;
  bool overflow = false;  // poison the gradients instead of leaving the process
  std::string at;         // a phase of the save or "backward"; empty: before the step
  int attempt = 0;        // the ZEROTRAIN_RESTART_COUNT it fires in; -1: every one
  int sleep_s = 0;        // sleep this long, then go on, instead of leaving
  std::string skip;       // a collective's name: leave out the step's first one of it

  bool poisons(int on_rank, std::int64_t at_step) const {
    return overflow && rank == on_rank && step == at_step;
  }
};

// Parses a ZEROTRAIN_FAULT value; throws UsageError naming the variable when malformed.
FaultPlan parse_fault_plan(std::string_view text);
// The plan from the environment, if ZEROTRAIN_FAULT is set.
std::optional<FaultPlan> fault_plan_from_env();
// Carries out an exit or signal plan when it names this rank, step and phase ("" = before the
// step; overflow plans are the trainer's to apply) in this attempt.
void maybe_inject_fault(const std::optional<FaultPlan>& plan, int rank, std::int64_t step,
                        std::string_view phase = "");
// This process's attempt: ZEROTRAIN_RESTART_COUNT, 0 when unset.
int restart_count_from_env();
// For a skip plan naming `rank` in this attempt, the fault its communicators carry
// (CommOptions::op_skip_fault), reading the step from `phases`; null for any other plan.
std::shared_ptr<comm::OpSkipFault> op_skip_fault_for(const std::optional<FaultPlan>& plan, int rank,
                                                     const MemoryTracker* phases);

}  // namespace zt::engine
