// Shape construction, element counts and printing.
#include "core/shape.h"

#include "core/error.h"

namespace zt {

Shape::Shape(std::initializer_list<std::int64_t> extents) {
  ZT_CHECK(extents.size() <= kMaxRank, "shape rank above Shape::kMaxRank");
  for (std::int64_t extent : extents) {
    ZT_CHECK(extent >= 0, "negative extent in a shape");
    extents_[static_cast<std::size_t>(rank_++)] = extent;
  }
}

std::int64_t Shape::numel() const {
  std::int64_t count = 1;
  for (int i = 0; i < rank_; ++i) count *= extents_[static_cast<std::size_t>(i)];
  return count;
}

Shape Shape::with_extent(int axis, std::int64_t extent) const {
  ZT_CHECK(0 <= axis && axis < rank_ && extent >= 0, "with_extent out of range");
  Shape result = *this;
  result.extents_[static_cast<std::size_t>(axis)] = extent;
  return result;
}

bool Shape::operator==(const Shape& other) const {
  if (rank_ != other.rank_) return false;
  for (int i = 0; i < rank_; ++i) {
    if ((*this)[i] != other[i]) return false;
  }
  return true;
}

std::string Shape::to_string() const {
  std::string out = "(";
  for (int i = 0; i < rank_; ++i) {
    if (i) out += ", ";
    out += std::to_string((*this)[i]);
  }
  return out + ")";
}

}  // namespace zt
