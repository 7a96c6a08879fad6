// Dynamic loss scaling for fp16 (Micikevicius et al., "Mixed Precision Training"): scale
// the loss so small gradients survive f16, skip any step whose gradients overflowed and
// back the scale off, and grow it again after a run of clean steps.
#pragma once

#include <cstdint>

namespace zt::optim {

struct LossScalerOptions {
  double initial_scale = 65536.0;
  std::int64_t growth_interval = 1000;  // clean steps before the scale grows
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  double min_scale = 1.0;
};

class DynamicLossScaler {
 public:
  explicit DynamicLossScaler(const LossScalerOptions& options);

  double scale() const { return scale_; }
  // Clean steps since the last growth or backoff (what a checkpoint saves with the scale).
  std::int64_t clean_steps() const { return clean_steps_; }
  // Continues from a saved scale and count (a resumed run).
  void restore(double scale, std::int64_t clean_steps) {
    scale_ = scale;
    clean_steps_ = clean_steps;
  }
  // Records a step's outcome; returns true when the step must be skipped (overflow). The
  // verdict is a non-finite all-reduced Σg² (DeviceOps::sum_of_squares over each rank's
  // gradients: an inf or NaN anywhere makes it non-finite), so every rank passes the same
  // one and keeps the same scale. Throws Error when an overflow happens at the minimum
  // scale (training cannot recover).
  bool update(bool overflow);

 private:
  LossScalerOptions options_;
  double scale_;
  std::int64_t clean_steps_ = 0;
};

}  // namespace zt::optim
