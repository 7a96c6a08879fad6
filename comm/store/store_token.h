// The shared secret that keeps strangers out of the store: generating it (the launcher),
// reading it from the environment (the ranks) and comparing it (the server).
#pragma once

#include <string>
#include <string_view>

namespace zt::comm {

// The launcher exports the token under this name to every rank it spawns.
inline constexpr const char* kStoreTokenEnvVar = "ZEROTRAIN_STORE_TOKEN";

// A fresh random 128-bit token as 32 lowercase hex digits, drawn from std::random_device.
std::string generate_store_token();

// The value of ZEROTRAIN_STORE_TOKEN, or an empty string when it is not set.
std::string store_token_from_env();

// Whether two tokens are equal, in time that depends only on their lengths and not on
// where they first differ, so a stranger cannot guess the token byte by byte.
bool tokens_equal(std::string_view a, std::string_view b);

}  // namespace zt::comm
