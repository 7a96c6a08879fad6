// The header of a NumPy .npy file (format version 1.0) of little-endian float32 values in C
// order: what `numpy.load` (and `numpy.load(..., mmap_mode="r")`) reads back with its shape.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace zt::data {

// The magic, the version, the header length and the header dictionary, padded with spaces and
// a newline so that the data starts on a 64-byte boundary, as NumPy writes it. The values
// follow directly: product(shape) floats.
std::string npy_f32_header(std::span<const std::int64_t> shape);

}  // namespace zt::data
