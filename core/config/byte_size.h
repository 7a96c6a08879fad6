// Sizes in bytes as people write them in configs and read them in logs: "512MiB", "8GB",
// "1.5GiB", "100B", "0". Decimal units (KB, MB, GB, TB) are powers of 1000, binary units
// (KiB, MiB, GiB, TiB) powers of 1024; the unit is case-insensitive and may follow a space.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zt {

// The number of bytes `text` names, or nullopt if it is not a size: negative, junk, an
// unknown unit, a fraction of a byte without a unit larger than B, or more than INT64_MAX.
// A fraction with a larger unit rounds down to a whole byte ("1.1KiB" is 1126 bytes).
std::optional<std::int64_t> parse_byte_size(std::string_view text);

// `bytes` for people: exact as "25 MiB" or "8 GB" when it is a whole number of a unit
// (binary units preferred), "100 B" below 1 KiB, else three significant digits
// ("1.46 KiB"). The exact forms parse back with parse_byte_size to the same value.
std::string format_byte_size(std::int64_t bytes);
// Three significant figures in the largest binary unit that is not above it: "4.22 MiB",
// "40.3 GiB", "241 GiB", "512 B" (reports and charts, where exactness is noise).
std::string format_approximate_bytes(std::int64_t bytes);

}  // namespace zt
