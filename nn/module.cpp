// SavedActivations bookkeeping.
#include "nn/module.h"

#include "core/error.h"

namespace zt::nn {

Tensor SavedActivations::pop() {
  ZT_CHECK(!stack_.empty(), "backward popped more saved activations than forward pushed");
  Tensor tensor = std::move(stack_.back());
  stack_.pop_back();
  return tensor;
}

}  // namespace zt::nn
