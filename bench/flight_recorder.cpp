// bench_flight_recorder: what the flight recorder (Note [The flight recorder]) costs. First
// one op's recording alone (enqueued, started, ended: the three calls a communicator makes)
// on one thread; then ZeRO stage 3 on 2 ranks as threads over Gloo (one communicator per
// lane, small buckets so a step has many ops) with the recorder on and off in alternating
// rounds of the same run, the fastest step of each, and their ratio, beside the bound the
// per-op cost gives (ops a step x cost / step time).
// Usage: bench_flight_recorder [--quick]
#include "comm/flight_recorder.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "bench/cpuinfo.h"
#include "bench/stage3_comm_job.h"

namespace {

using Clock = std::chrono::steady_clock;

double recording_ns_per_op(int ops) {
  zt::comm::FlightRecorder recorder(0);
  const std::string group = "world/gradients";
  const auto start = Clock::now();
  for (int i = 0; i < ops; ++i) {
    const std::uint64_t id =
        recorder.enqueued(group, static_cast<std::uint64_t>(i),
                          zt::comm::CollectiveKind::kAllGather, 65536, zt::DType::kF32, -1);
    recorder.started(id);
    recorder.ended(id);
  }
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / ops;
}

struct Round {
  double fastest_step_ms = 0;
  double ops_per_step = 0;  // rank 0's, recorder on only
};

Round train(const zt::Config& config, bool record) {
  Round round;
  zt::bench::run_stage3_comm_job(
      config,
      [&](int rank, zt::MemoryTracker&, zt::comm::CommOptions& options,
          zt::engine::TrainerOptions&) {
        if (record) options.flight_recorder = std::make_shared<zt::comm::FlightRecorder>(rank);
      },
      [&](int rank, const zt::engine::TrainResult& result, const zt::comm::CommOptions& options) {
        if (rank != 0) return;
        round.fastest_step_ms = zt::bench::fastest_step_after_first(result);
        if (record) {
          round.ops_per_step = static_cast<double>(options.flight_recorder->recorded()) /
                               static_cast<double>(result.metrics.size());
        }
      });
  return round;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string_view(argv[1]) == "--quick";
  const int ops = quick ? 100000 : 2000000;
  const double ns = recording_ns_per_op(ops);
  std::printf("bench_flight_recorder: %s\n", zt::bench::cpuinfo_field("model name").c_str());
  std::printf("recording one op (enqueued + started + ended), %d ops on one thread: %.0f ns\n", ops,
              ns);

  const zt::Config config = zt::bench::stage3_comm_job_config("bench_flight_recorder", quick);
  const int rounds = quick ? 1 : 6;
  double on_ms = 1e30;
  double off_ms = 1e30;
  double ops_per_step = 0;
  for (int r = 0; r < rounds; ++r) {
    const Round off = train(config, false);
    const Round on = train(config, true);
    off_ms = std::min(off_ms, off.fastest_step_ms);
    on_ms = std::min(on_ms, on.fastest_step_ms);
    ops_per_step = on.ops_per_step;
  }
  std::printf(
      "ZeRO stage 3, %d ranks as threads, GPT %s, 64 KiB buckets, fastest step of %d rounds:\n"
      "  recorder off %.2f ms, on %.2f ms: on / off = %.4f\n"
      "  rank 0 records %.0f ops a step: %.0f ops x %.0f ns = %.4f%% of the step (the bound)\n",
      zt::bench::kStage3CommJobWorld, quick ? "2 x 64" : "4 x 128", rounds, off_ms, on_ms,
      on_ms / off_ms, ops_per_step, ops_per_step, ns, 100.0 * ops_per_step * ns * 1e-6 / off_ms);
  return 0;
}
