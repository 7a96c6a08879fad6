// Inference and checking of the batch sizes.
#include "core/config/batch_size.h"

#include "core/error.h"

namespace zt {
namespace {

std::string str(std::int64_t value) { return std::to_string(value); }

std::int64_t checked_product(const Config& config, std::int64_t a, std::int64_t b, std::int64_t c) {
  std::int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result) || __builtin_mul_overflow(result, c, &result)) {
    throw ConfigError(where_set(config, "train.micro_batch_size") + ": train batch sizes: " +
                      str(a) + " x " + str(b) + " x " + str(c) + " is too large");
  }
  return result;
}

// `numerator` / `denominator` when it divides evenly, else a ConfigError naming `key`.
std::int64_t exact_quotient(const Config& config, const std::string& key, std::int64_t numerator,
                            std::int64_t denominator, const std::string& arithmetic) {
  if (denominator <= 0 || numerator % denominator != 0 || numerator / denominator < 1) {
    throw ConfigError(where_set(config, "train.global_batch_size") + ": cannot infer " + key +
                      ": " + arithmetic + " = " + str(numerator) + " / " + str(denominator) +
                      " is not a whole number >= 1; change train.global_batch_size to a "
                      "multiple of " +
                      str(denominator) + " or set " + key + " explicitly");
  }
  return numerator / denominator;
}

}  // namespace

BatchSizes resolve_batch_sizes(const Config& config, std::int64_t world_size) {
  ZT_CHECK(world_size >= 1, "world size " + str(world_size));
  const TrainConfig& train = config.train;
  BatchSizes sizes{train.micro_batch_size, train.grad_accum_steps, train.global_batch_size, ""};
  const std::string world = " x world size " + str(world_size);
  if (sizes.micro_batch_size == 0 && sizes.global_batch_size != 0) {
    if (sizes.grad_accum_steps == 0) sizes.grad_accum_steps = 1;
    sizes.micro_batch_size =
        exact_quotient(config, "train.micro_batch_size", sizes.global_batch_size,
                       sizes.grad_accum_steps * world_size,
                       "train.global_batch_size / (train.grad_accum_steps" + world + ")");
    sizes.inferred = "train.micro_batch_size = " + str(sizes.micro_batch_size);
  } else if (sizes.grad_accum_steps == 0 && sizes.global_batch_size != 0) {
    sizes.grad_accum_steps =
        exact_quotient(config, "train.grad_accum_steps", sizes.global_batch_size,
                       sizes.micro_batch_size * world_size,
                       "train.global_batch_size / (train.micro_batch_size" + world + ")");
    sizes.inferred = "train.grad_accum_steps = " + str(sizes.grad_accum_steps);
  }
  if (sizes.micro_batch_size == 0) sizes.micro_batch_size = kDefaultMicroBatchSize;
  if (sizes.grad_accum_steps == 0) sizes.grad_accum_steps = 1;
  const std::int64_t product =
      checked_product(config, sizes.micro_batch_size, sizes.grad_accum_steps, world_size);
  if (sizes.global_batch_size == 0) {
    sizes.global_batch_size = product;
    sizes.inferred = "train.global_batch_size = " + str(product);
  } else if (sizes.global_batch_size != product) {
    throw ConfigError(where_set(config, "train.global_batch_size") +
                      ": train.global_batch_size = " + str(sizes.global_batch_size) +
                      " does not equal train.micro_batch_size " + str(sizes.micro_batch_size) +
                      " x train.grad_accum_steps " + str(sizes.grad_accum_steps) + world + " = " +
                      str(product) + "; set train.global_batch_size = " + str(product) +
                      ", or leave one of the three at 0 to have it inferred");
  }
  if (!sizes.inferred.empty()) {
    sizes.inferred += " (" + str(sizes.global_batch_size) + " = " + str(sizes.micro_batch_size) +
                      " x " + str(sizes.grad_accum_steps) + " x " + str(world_size) + " ranks)";
  }
  return sizes;
}

}  // namespace zt
