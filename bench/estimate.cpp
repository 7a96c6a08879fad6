// bench_estimate: how long the memory estimator takes for configs/gpt-70b.toml (65B
// parameters) at world 64, one rank and the whole report (the asked ranks, the checkpointing
// toggle and the ~56-cell table), against the 1 s the estimate is meant to stay under; and
// the same for the tiny config, whose real run is measured next to it.
#include <chrono>
#include <cstdio>
#include <string>

#include "core/config/config_loader.h"
#include "runtime/estimate/estimate_table.h"

namespace {

template <typename Fn>
double best_seconds(int repeats, Fn fn) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root = argc > 1 ? argv[1] : ".";
  const zt::Config big = zt::load_config_file(root + "/configs/gpt-70b.toml", {});
  const zt::Config tiny = zt::load_config_file(root + "/configs/tiny.toml", {});
  std::int64_t parameters = 0;
  const double one_rank =
      best_seconds(3, [&] { parameters = zt::estimate::estimate_rank(big, 64, 0).parameters; });
  const double report = best_seconds(3, [&] { (void)zt::estimate::estimate_report(big, 64); });
  const double tiny_report = best_seconds(3, [&] { (void)zt::estimate::estimate_report(tiny, 2); });
  std::printf("%-44s %10s\n", "what", "seconds");
  std::printf(
      "%-44s %10.4f\n",
      ("one rank of gpt-70b (" + std::to_string(parameters) + " parameters), world 64").c_str(),
      one_rank);
  std::printf("%-44s %10.4f\n", "whole report, gpt-70b at world 64", report);
  std::printf("%-44s %10.4f\n", "whole report, tiny at world 2", tiny_report);
  std::printf("ratio: gpt-70b report / 1 s goal = %.2f\n", report / 1.0);
  return 0;
}
