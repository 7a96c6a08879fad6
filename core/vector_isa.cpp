// Which vector instruction sets this CPU runs (core/cpu_features.h).
#include "core/vector_isa.h"

#include "core/cpu_features.h"

namespace zt {
namespace {

std::vector<VectorIsa> detect_vector_isas() {
  std::vector<VectorIsa> isas{VectorIsa::kBaseline};
  const CpuFeatures& cpu = cpu_features();
  if (cpu.fma && cpu.avx2) isas.push_back(VectorIsa::kAvx2);
  if (cpu.fma && cpu.avx512f) isas.push_back(VectorIsa::kAvx512);
  return isas;
}

}  // namespace

std::string_view vector_isa_name(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::kAvx2:
      return "avx2";
    case VectorIsa::kAvx512:
      return "avx512";
    case VectorIsa::kBaseline:
      break;
  }
  return "baseline";
}

const std::vector<VectorIsa>& supported_vector_isas() {
  static const std::vector<VectorIsa> isas = detect_vector_isas();
  return isas;
}

VectorIsa widest_vector_isa() {
  static const VectorIsa widest = supported_vector_isas().back();
  return widest;
}

}  // namespace zt
