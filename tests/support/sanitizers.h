// Whether this test binary was built with AddressSanitizer. Tests that bound the process's
// resident memory skip under it: ASan keeps freed blocks in its quarantine (256 MiB by
// default) and maps shadow memory, so resident bytes there measure ASan, not the code. The
// default build runs those bounds.
#pragma once

namespace zt::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

inline constexpr const char* kResidentMemoryUnderAsan =
    "resident memory is not the code's under AddressSanitizer (quarantine and shadow); the "
    "default build checks this bound";

}  // namespace zt::testing
