// Where tests find the checkout, the build and the zerotrain CLI: the paths compiled in, unless
// ZT_SOURCE_DIR, ZT_BINARY_DIR or ZT_ZEROTRAIN_EXE is set. Binaries built on one machine then
// run from another path on another machine (scripts/gpu-check unpacks them wherever it likes).
#pragma once

#include <cstdlib>
#include <string>

namespace zt::testing {

inline std::string path_from_environment(const char* variable, const char* compiled_in) {
  const char* value = std::getenv(variable);  // NOLINT(concurrency-mt-unsafe): read-only env
  return value != nullptr && *value != '\0' ? value : compiled_in;
}

// The source checkout (configs/, docs/, tests/support/ scripts).
inline std::string source_dir() {
  return path_from_environment("ZT_SOURCE_DIR", ZT_BUILT_SOURCE_DIR);
}
// The build folder the tests belong to.
inline std::string binary_dir() {
  return path_from_environment("ZT_BINARY_DIR", ZT_BUILT_BINARY_DIR);
}
// The `zerotrain` executable under test.
inline std::string zerotrain_binary() {
  return path_from_environment("ZT_ZEROTRAIN_EXE", ZT_BUILT_ZEROTRAIN_EXE);
}

}  // namespace zt::testing
