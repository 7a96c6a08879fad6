// The slot the CUDA module fills with its optimizer steps.
#include "optim/cuda_optimizer_entries.h"

namespace zt::optim {

CudaModuleSlot<CudaOptimizerEntries>& cuda_optimizer_entries() {
  static CudaModuleSlot<CudaOptimizerEntries> slot;
  return slot;
}

}  // namespace zt::optim
