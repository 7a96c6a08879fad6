// CRC-32C (Castagnoli), the checksum of checkpoint files: the SSE4.2 crc32 instruction
// where the CPU has it (chosen at run time), a table otherwise; both give the same value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace zt {

// The CRC-32C of `bytes` continued from `crc` (0 for a fresh checksum):
// crc32c(b, crc32c(a)) == crc32c(a followed by b).
std::uint32_t crc32c(std::span<const std::byte> bytes, std::uint32_t crc = 0);
// The same by the table, whatever the CPU has (tests compare the two paths).
std::uint32_t crc32c_portable(std::span<const std::byte> bytes, std::uint32_t crc = 0);

}  // namespace zt
