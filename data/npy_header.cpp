// NumPy's format: "\x93NUMPY", major 1, minor 0, a little-endian u16 header length, then a
// Python dict literal; version 1.0 holds headers up to 65535 bytes, far more than a shape
// needs.
#include "data/npy_header.h"

#include "core/error.h"

namespace zt::data {

std::string npy_f32_header(std::span<const std::int64_t> shape) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (const std::int64_t extent : shape) {
    ZT_CHECK(extent >= 0, "an .npy shape has no negative extent");
    dict += std::to_string(extent) + ", ";
  }
  // "(2, 3)", but a 1-tuple keeps its comma: "(2,)".
  if (!shape.empty()) dict.resize(dict.size() - (shape.size() == 1 ? 1 : 2));
  dict += "), }";
  constexpr std::size_t kPreamble = 10;  // magic 6, version 2, length 2
  std::size_t total = kPreamble + dict.size() + 1;
  total = (total + 63) / 64 * 64;
  dict.append(total - kPreamble - dict.size() - 1, ' ');
  dict += '\n';
  const std::size_t length = dict.size();
  std::string header = "\x93NUMPY";
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(length & 0xff);
  header += static_cast<char>((length >> 8) & 0xff);
  return header + dict;
}

}  // namespace zt::data
