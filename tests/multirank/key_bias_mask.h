// Which parameters of a GPT are attention key-bias elements: the ones whose gradient is pure
// round-off (Note [Adam and the key bias] in zero_equivalence_test.cpp), so that tests which
// compare AdamW runs of different summation orders bound them by lr x steps instead.
#pragma once

#include <cstdint>
#include <vector>

#include "core/config/config.h"
#include "runtime/engine/model_factory.h"
#include "sharding/flat_layout.h"

namespace zt::testing {

// One flag per unpadded parameter of `config`'s model, in export order.
inline std::vector<bool> key_bias_mask(const Config& config) {
  const zero::FlatLayout layout = zero::make_flat_layout(engine::make_model(config), 1);
  std::vector<bool> mask(static_cast<std::size_t>(layout.numel), false);
  const std::int64_t c = config.model.d_model;
  for (const auto& block : layout.blocks) {
    for (const auto& slot : block.parameters) {
      if (slot.spec.name != "attn.qkv.bias") continue;
      for (std::int64_t i = c; i < 2 * c; ++i) {
        mask[static_cast<std::size_t>(slot.unpadded_offset + i)] = true;
      }
    }
  }
  return mask;
}

}  // namespace zt::testing
