// Deterministic, layout-independent parameter initialization.
#include "nn/parameter.h"

#include "core/random.h"

namespace zt::nn {

void initialize_parameter(const Init& init, std::uint64_t key, std::int64_t begin,
                          std::span<float> out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto index = static_cast<std::uint64_t>(begin) + i;
    switch (init.kind) {
      case Init::Kind::kZeros:
        out[i] = 0.0f;
        break;
      case Init::Kind::kOnes:
        out[i] = 1.0f;
        break;
      case Init::Kind::kNormal:
        out[i] = init.scale * standard_normal(key, index);
        break;
      case Init::Kind::kUniform:
        out[i] = init.scale * (2.0f * uniform01(key, index) - 1.0f);
        break;
    }
  }
}

}  // namespace zt::nn
