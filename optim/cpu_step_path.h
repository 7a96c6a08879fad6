// Which vector loop the optimizers' host steps (Adam::step and Sgd::step on host tensors) run:
// the CPU Adam's paths (scalar, AVX2+FMA, AVX-512F), the fastest this CPU has unless a test
// forces a lower one to compare its bits.
#pragma once

#include "optim/cpu_adam/cpu_adam.h"

namespace zt::optim {

// The path the host steps run now: best_cpu_adam_path() until set_cpu_step_path says otherwise.
CpuAdamPath cpu_step_path();

// Makes every later host step of this process run `path` (an internal error if this CPU lacks
// it). Every path gives the same bits (Note [The step loop on every vector path] in
// optim/step_internal.h), so this changes the speed only.
void set_cpu_step_path(CpuAdamPath path);

}  // namespace zt::optim
