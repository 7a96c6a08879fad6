// Out-of-line construction of internal errors, so ZT_CHECK stays a small branch.
#include "core/error.h"

namespace zt::detail {

void throw_internal_error(const char* file, int line, const char* condition,
                          const std::string& message) {
  throw InternalError("internal error at " + std::string(file) + ":" + std::to_string(line) +
                      ": check `" + condition + "` failed: " + message +
                      " (this is a zerotrain bug; please report it)");
}

}  // namespace zt::detail
