// The dtype contract between nn and its callers: a tensor handed to a layer or a kernel in
// the wrong dtype is a bug of the caller (the sharding layer, the trainer), not a user error.
#pragma once

#include <string>

#include "core/dtype.h"
#include "core/error.h"
#include "core/tensor.h"

namespace zt::nn {

inline void expect_dtype(const Tensor& tensor, DType dtype, const std::string& what) {
  ZT_CHECK(tensor.dtype() == dtype, what + " is " + std::string(dtype_name(tensor.dtype())) +
                                        ", expected " + std::string(dtype_name(dtype)));
}

}  // namespace zt::nn
