// Store tokens: generation from std::random_device, the environment variable, and a
// constant-time comparison.
#include "comm/store/store_token.h"

#include <cstdint>
#include <cstdlib>
#include <random>

namespace zt::comm {

std::string generate_store_token() {
  constexpr char kDigits[] = "0123456789abcdef";
  std::random_device device;
  std::string token;
  token.reserve(32);
  for (int word = 0; word < 4; ++word) {
    // random_device yields 32-bit values; four of them make the 128 bits.
    auto bits = static_cast<std::uint32_t>(device());
    for (int nibble = 0; nibble < 8; ++nibble) {
      token.push_back(kDigits[bits & 0xFu]);
      bits >>= 4;
    }
  }
  return token;
}

std::string store_token_from_env() {
  // Read once per process at start-up, before ranks spawn threads that could call setenv.
  const char* value = std::getenv(kStoreTokenEnvVar);  // NOLINT(concurrency-mt-unsafe)
  return value ? std::string(value) : std::string();
}

bool tokens_equal(std::string_view a, std::string_view b) {
  // Every byte of the longer string is visited and the differences OR-ed together, so the
  // loop never exits early on the first mismatch.
  const std::size_t n = a.size() > b.size() ? a.size() : b.size();
  unsigned difference = a.size() == b.size() ? 0u : 1u;
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0u;
    const auto y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0u;
    difference |= x ^ y;
  }
  return difference == 0;
}

}  // namespace zt::comm
