// The vector instruction sets the CPU's element loops are compiled for, and which of them this
// CPU runs (Note [One loop, three instruction sets] in nn/kernels/cpu/gelu_cpu.cpp; core's
// own loops, the gradient norm's square sums, choose by it too).
#pragma once

#include <string_view>
#include <vector>

namespace zt {

// kBaseline is the build's own target (x86-64 without FMA, or the host ISA elsewhere);
// kAvx2 is AVX2 with FMA; kAvx512 is AVX-512F with FMA. A loop gives the same bits on each.
enum class VectorIsa { kBaseline, kAvx2, kAvx512 };

std::string_view vector_isa_name(VectorIsa isa);

// The instruction sets this CPU runs, kBaseline first and the widest last (asked once).
const std::vector<VectorIsa>& supported_vector_isas();

// The last of supported_vector_isas(): what the kernels use.
VectorIsa widest_vector_isa();

}  // namespace zt
