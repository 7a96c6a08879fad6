// A Linear's bias on the CPU: the forward's bias add over the f32 product and the backward's
// column sums (the bias gradient), as loops compiled for the widest vector unit the CPU has
// (Note [One loop, three instruction sets]), each giving the same bits on every path.
#pragma once

#include <cstdint>

#include "core/vector_isa.h"

namespace zt::nn::cpu {

// row[c] = row[c] + bias[c] for c < cols (math::bias_add).
void add_bias_f32(float* row, const float* bias, std::int64_t cols,
                  VectorIsa isa = widest_vector_isa());

// sums[c] += Σ_n values[n * row_stride + c] for c < cols: each column summed in f32 in row
// order (n = 0, 1, ...), whatever the isa, so a bias gradient does not depend on the machine.
// The loop holds a block of columns in vector registers while the rows stream by.
void add_column_sums_f32(const float* values, std::int64_t rows, std::int64_t cols,
                         std::int64_t row_stride, float* sums, VectorIsa isa = widest_vector_isa());

}  // namespace zt::nn::cpu
