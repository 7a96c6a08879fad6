// The byte <-> character map of GPT-2's encoder.py (bytes_to_unicode), built once.
#include "data/byte_level_alphabet.h"

#include <array>
#include <cstdint>

namespace zt::data {
namespace {

// Note [Byte-level alphabet]
// GPT-2 writes its vocabulary as text, so every byte needs a visible character. Bytes that
// are already printable and not spaces keep their own code point: '!'..'~' (33..126),
// U+00A1..U+00AC and U+00AE..U+00FF (Latin-1 minus the soft hyphen). The remaining 68
// bytes (controls, space, DEL, 0x80..0xA0, 0xAD) take U+0100, U+0101, ... in byte order,
// so the space 0x20 is 'Ġ' (U+0120) and the newline 0x0A is 'Ċ' (U+010A). Every code point
// used is below U+0144, which makes the inverse a small table.
constexpr unsigned kCodePoints = 0x144;

std::string utf8_of(unsigned code_point) {  // code points below U+0800 only
  std::string out;
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
  return out;
}

struct Alphabet {
  std::array<std::string, 256> symbol;
  std::array<std::int16_t, kCodePoints> byte_of;  // -1: not in the alphabet

  Alphabet() {
    byte_of.fill(-1);
    auto keeps_own = [](unsigned b) {
      return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    unsigned next_extra = 0x100;
    for (unsigned b = 0; b < 256; ++b) {
      const unsigned code_point = keeps_own(b) ? b : next_extra++;
      symbol[b] = utf8_of(code_point);
      byte_of[code_point] = static_cast<std::int16_t>(b);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet instance;
  return instance;
}

}  // namespace

const std::string& byte_level_symbol(unsigned char byte) { return alphabet().symbol[byte]; }

std::optional<std::string> byte_level_bytes(std::string_view symbols) {
  const Alphabet& a = alphabet();
  std::string bytes;
  bytes.reserve(symbols.size());
  for (std::size_t i = 0; i < symbols.size();) {
    const auto lead = static_cast<unsigned char>(symbols[i]);
    unsigned code_point = 0;
    if (lead < 0x80) {
      code_point = lead;
      i += 1;
    } else if ((lead & 0xE0) == 0xC0 && i + 1 < symbols.size() &&
               (static_cast<unsigned char>(symbols[i + 1]) & 0xC0) == 0x80) {
      code_point = ((lead & 0x1Fu) << 6) | (static_cast<unsigned char>(symbols[i + 1]) & 0x3Fu);
      i += 2;
    } else {
      return std::nullopt;  // three- and four-byte characters are all outside the alphabet
    }
    if (code_point >= kCodePoints || a.byte_of[code_point] < 0) return std::nullopt;
    bytes += static_cast<char>(a.byte_of[code_point]);
  }
  return bytes;
}

std::string byte_level_symbols(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) out += byte_level_symbol(static_cast<unsigned char>(c));
  return out;
}

}  // namespace zt::data
