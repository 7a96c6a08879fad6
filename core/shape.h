// Shape: up to kMaxRank extents, stored inline so making a view allocates nothing.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace zt {

class Shape {
 public:
  static constexpr int kMaxRank = 6;

  Shape() = default;
  Shape(std::initializer_list<std::int64_t> extents);

  int rank() const { return rank_; }
  std::int64_t operator[](int axis) const { return extents_[static_cast<std::size_t>(axis)]; }
  std::int64_t numel() const;
  // This shape with extent `axis` replaced.
  Shape with_extent(int axis, std::int64_t extent) const;
  bool operator==(const Shape& other) const;
  std::string to_string() const;  // "(2, 3, 4)"

 private:
  std::array<std::int64_t, kMaxRank> extents_{};
  int rank_ = 0;
};

}  // namespace zt
