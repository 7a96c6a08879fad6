// bench_collective_check: what comm.check_collectives costs (Note [The collective check]).
// ZeRO stage 3 on 2 ranks as threads over Gloo (one communicator per lane, small buckets so a
// step has many ops), with the check off, "step" and "every" in rounds of the same run, the
// order rotating each round: the fastest step of each and the ratios to off. "step" adds one
// exchange of four words per communicator and step; "every" one exchange per op, each waiting for
// the ops before it. Usage: bench_collective_check [--quick]
#include "comm/collective_check.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "bench/cpuinfo.h"
#include "bench/stage3_comm_job.h"

namespace {

// The fastest step (after the first) of one run with the check in `mode`.
double fastest_step_ms(const zt::Config& config, zt::comm::CollectiveCheckMode mode) {
  double fastest = 0;
  zt::bench::run_stage3_comm_job(
      config,
      [&](int, zt::MemoryTracker& tracker, zt::comm::CommOptions& options,
          zt::engine::TrainerOptions& trainer_options) {
        auto check = std::make_shared<zt::comm::CollectiveCheck>(mode, &tracker);
        options.collective_check = check;
        trainer_options.end_of_step = [check] { check->end_step(); };
      },
      [&](int rank, const zt::engine::TrainResult& result, const zt::comm::CommOptions&) {
        if (rank == 0) fastest = zt::bench::fastest_step_after_first(result);
      });
  return fastest;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string_view(argv[1]) == "--quick";
  std::printf("bench_collective_check: %s\n", zt::bench::cpuinfo_field("model name").c_str());
  const zt::Config config = zt::bench::stage3_comm_job_config("bench_collective_check", quick);
  using Mode = zt::comm::CollectiveCheckMode;
  const int rounds = quick ? 1 : 6;
  // The order rotates each round, so no mode always runs right after "every" (whose threads
  // leave the cores warm, or busy, for the next run).
  const Mode modes[3] = {Mode::kOff, Mode::kStep, Mode::kEvery};
  double fastest[3] = {1e30, 1e30, 1e30};
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < 3; ++i) {
      const int m = (r + i) % 3;
      fastest[m] = std::min(fastest[m], fastest_step_ms(config, modes[m]));
    }
  }
  const double off_ms = fastest[0];
  const double step_ms = fastest[1];
  const double every_ms = fastest[2];
  std::printf(
      "ZeRO stage 3, %d ranks as threads, GPT %s, 64 KiB buckets, fastest step of %d rounds:\n"
      "  off %.2f ms, step %.2f ms, every %.2f ms\n"
      "  step / off = %.4f (the goal: under 1.02), every / off = %.4f\n",
      zt::bench::kStage3CommJobWorld, quick ? "2 x 64" : "4 x 128", rounds, off_ms, step_ms,
      every_ms, step_ms / off_ms, every_ms / off_ms);
  return 0;
}
