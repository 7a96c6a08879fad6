// The elementwise step of every ring reduction: combine a received segment with the local
// one, in f32, and store in the wire dtype (bf16/f16 partial sums are rounded at each hop).
#pragma once

#include <cstddef>

#include "comm/communicator.h"
#include "core/dtype.h"

namespace zt::comm {

// dst[i] = op(received[i], local[i]) / divisor for `count` elements of `dtype`, computed in
// f32. kAvg combines as a sum; the caller passes divisor = world_size on the final hop (and
// 1 elsewhere; kMax ignores it). dst may alias received or local element for element.
void combine_elements(void* dst, const void* received, const void* local, std::size_t count,
                      DType dtype, ReduceOp op, float divisor);

}  // namespace zt::comm
