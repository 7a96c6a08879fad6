// Where select_tokens finds each row's last logits in a (B, C) or (B, T, C) tensor, checked
// once for every backend.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/tensor.h"

namespace zt::nn {

// Row b's logits are `columns` elements at first_offset + b * row_stride.
struct LastLogitRows {
  std::int64_t rows = 0;
  std::int64_t columns = 0;
  std::int64_t row_stride = 0;    // elements between rows: T x C
  std::int64_t first_offset = 0;  // row 0's last position: (T - 1) x C
};

inline LastLogitRows last_logit_rows(const Tensor& logits, std::int64_t classes,
                                     const Tensor& ids) {
  ZT_CHECK(
      logits.rank() == 2 || logits.rank() == 3,
      "select_tokens reads logits (B, C) or (B, T, C), got rank " + std::to_string(logits.rank()));
  ZT_CHECK(ids.dtype() == DType::kI32 && ids.numel() == logits.dim(0),
           "select_tokens writes one i32 id per row of the logits");
  LastLogitRows rows;
  rows.rows = logits.dim(0);
  rows.columns = logits.dim(logits.rank() - 1);
  const std::int64_t positions = logits.rank() == 3 ? logits.dim(1) : 1;
  ZT_CHECK(classes > 0 && classes <= rows.columns && positions > 0,
           "select_tokens over " + std::to_string(classes) + " of " + std::to_string(rows.columns) +
               " columns");
  rows.row_stride = positions * rows.columns;
  rows.first_offset = (positions - 1) * rows.columns;
  return rows;
}

}  // namespace zt::nn
