// The process-wide choice of the host steps' vector path.
#include "optim/cpu_step_path.h"

#include <atomic>
#include <string>

#include "core/error.h"

namespace zt::optim {
namespace {

std::atomic<CpuAdamPath>& chosen_path() {
  static std::atomic<CpuAdamPath> path{best_cpu_adam_path()};
  return path;
}

}  // namespace

CpuAdamPath cpu_step_path() { return chosen_path().load(std::memory_order_relaxed); }

void set_cpu_step_path(CpuAdamPath path) {
  ZT_CHECK(cpu_adam_path_available(path), "optimizer step: path " +
                                              std::string(cpu_adam_path_name(path)) +
                                              " is not available on this CPU");
  chosen_path().store(path, std::memory_order_relaxed);
}

}  // namespace zt::optim
