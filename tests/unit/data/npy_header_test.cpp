// The .npy header as NumPy writes it: magic, version 1.0, the dict, padded so the data starts
// on a 64-byte boundary (numpy.lib.format's layout; Python's numpy reads eval --logits files
// in the integration test).
#include "data/npy_header.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace zt::data {
namespace {

std::string dict_of(const std::string& header) {
  const std::size_t length = static_cast<unsigned char>(header[8]) |
                             (static_cast<std::size_t>(static_cast<unsigned char>(header[9])) << 8);
  EXPECT_EQ(header.size(), 10 + length);
  return header.substr(10);
}

TEST(NpyHeader, StartsTheDataOnA64ByteBoundaryWithTheShapeNumpyWrites) {
  const std::vector<std::int64_t> shape = {64, 1024, 50257};
  const std::string header = npy_f32_header(shape);
  EXPECT_EQ(header.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(header.size() % 64, 0u);
  const std::string dict = dict_of(header);
  EXPECT_EQ(dict.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (64, 1024, 50257), }", 0),
            0u)
      << dict;
  EXPECT_EQ(dict.back(), '\n');
  EXPECT_EQ(dict.find_first_not_of(' ', dict.find('}') + 1), dict.size() - 1);
}

TEST(NpyHeader, AOneAxisShapeKeepsItsTupleComma) {
  const std::vector<std::int64_t> one = {5};
  EXPECT_NE(dict_of(npy_f32_header(one)).find("'shape': (5,), }"), std::string::npos);
  const std::vector<std::int64_t> none;
  EXPECT_NE(dict_of(npy_f32_header(none)).find("'shape': (), }"), std::string::npos);
}

}  // namespace
}  // namespace zt::data
