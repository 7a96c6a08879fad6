// One rank's whole run: find the other ranks (environment, store, communicator), size the
// device, train, report. What `zerotrain train` does.
#pragma once

#include "core/config/config.h"

namespace zt::engine {

// Trains with `config` as the rank the environment describes (torchrun, Slurm or Open MPI
// variables; a single rank when none is set). Returns the process exit code.
int run_training(const Config& config);

}  // namespace zt::engine
