// CRC-32C: the published check value, the instruction path equal to the table on every
// length and alignment, and continuation.
#include "core/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace zt {
namespace {

std::span<const std::byte> bytes_of(const std::string& text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

TEST(Crc32c, MatchesThePublishedCheckValue) {
  // RFC 3720 (iSCSI) B.4 and every CRC catalogue: CRC-32C("123456789") = 0xE3069283.
  EXPECT_EQ(crc32c(bytes_of("123456789")), 0xE3069283u);
  EXPECT_EQ(crc32c_portable(bytes_of("123456789")), 0xE3069283u);
  EXPECT_EQ(crc32c(bytes_of("")), 0u);
  // 32 bytes of zeros (RFC 3720 B.4): 0x8A9136AA.
  EXPECT_EQ(crc32c(bytes_of(std::string(32, '\0'))), 0x8A9136AAu);
}

TEST(Crc32c, InstructionAndTableAgreeOnEveryLengthAndOffset) {
  std::vector<std::byte> data(300);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 131 + 7);
  for (std::size_t offset = 0; offset < 9; ++offset) {
    for (std::size_t length = 0; offset + length <= data.size(); length += 13) {
      const std::span<const std::byte> piece(data.data() + offset, length);
      ASSERT_EQ(crc32c(piece), crc32c_portable(piece)) << offset << " " << length;
    }
  }
}

TEST(Crc32c, ContinuesAcrossPieces) {
  const std::string text = "the quick brown fox jumps over the lazy dog, twice over";
  const std::uint32_t whole = crc32c(bytes_of(text));
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    const std::uint32_t first = crc32c(bytes_of(text.substr(0, cut)));
    EXPECT_EQ(crc32c(bytes_of(text.substr(cut)), first), whole) << cut;
  }
}

}  // namespace
}  // namespace zt
