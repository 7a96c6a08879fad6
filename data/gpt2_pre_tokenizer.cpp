// GPT-2's pre-tokenizer over PCRE2 (UTF and UCP modes: \p{L}, \p{N} and \s are Unicode's),
// and the UTF-8 check that must come first (PCRE2 is told the text is already valid).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "data/gpt2_pre_tokenizer.h"

#include <pcre2.h>

#include <string>

#include "core/error.h"

namespace zt::data {

struct Gpt2PreTokenizer::Compiled {
  pcre2_code* code = nullptr;
  pcre2_match_data* match = nullptr;
  ~Compiled() {
    pcre2_match_data_free(match);
    pcre2_code_free(code);
  }
};

Gpt2PreTokenizer::Gpt2PreTokenizer() : compiled_(std::make_unique<Compiled>()) {
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kGpt2PreTokenizerPattern.data()),
                                  kGpt2PreTokenizerPattern.size(), PCRE2_UTF | PCRE2_UCP, &error,
                                  &error_offset, nullptr);
  ZT_CHECK(compiled_->code != nullptr,
           "PCRE2 refused GPT-2's pattern (error " + std::to_string(error) + ")");
  // JIT is an optimisation only: without it (a PCRE2 built without JIT) matching still works.
  (void)pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE);
  compiled_->match = pcre2_match_data_create_from_pattern(compiled_->code, nullptr);
  ZT_CHECK(compiled_->match != nullptr, "PCRE2 could not allocate match data");
}

Gpt2PreTokenizer::~Gpt2PreTokenizer() = default;
Gpt2PreTokenizer::Gpt2PreTokenizer(Gpt2PreTokenizer&&) noexcept = default;
Gpt2PreTokenizer& Gpt2PreTokenizer::operator=(Gpt2PreTokenizer&&) noexcept = default;

void Gpt2PreTokenizer::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  pieces.clear();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  PCRE2_SIZE at = 0;
  while (at < text.size()) {
    const int rc = pcre2_match(compiled_->code, subject, text.size(), at, PCRE2_NO_UTF_CHECK,
                               compiled_->match, nullptr);
    // Every character is matched by one of the last alternatives, so there is always a
    // non-empty match starting exactly at `at`.
    ZT_CHECK(rc > 0, "GPT-2's pattern found no pre-token at byte " + std::to_string(at) +
                         " (PCRE2 code " + std::to_string(rc) + ")");
    const PCRE2_SIZE* range = pcre2_get_ovector_pointer(compiled_->match);
    ZT_CHECK(range[0] == at && range[1] > at, "pre-tokens must cover the text");
    pieces.push_back(text.substr(at, range[1] - at));
    at = range[1];
  }
}

std::size_t utf8_complete_prefix(std::string_view bytes, std::size_t from, std::string_view source,
                                 std::uint64_t base_offset) {
  auto invalid = [&](std::size_t at) {
    throw FormatError(std::string(source) + ": byte " + std::to_string(base_offset + at) +
                      " is not UTF-8; a BPE tokenizer reads UTF-8 text (convert it first, e.g. "
                      "with iconv)");
  };
  std::size_t i = from;
  while (i < bytes.size()) {
    const auto lead = static_cast<unsigned char>(bytes[i]);
    std::size_t length = 0;
    unsigned min_code_point = 0;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2, min_code_point = 0x80;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3, min_code_point = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4, min_code_point = 0x10000;
    } else {
      invalid(i);
    }
    unsigned code_point = lead & (0x7Fu >> length);
    for (std::size_t k = 1; k < length; ++k) {
      if (i + k >= bytes.size()) return i;  // cut off: more bytes may complete it
      const auto next = static_cast<unsigned char>(bytes[i + k]);
      if ((next & 0xC0) != 0x80) invalid(i);
      code_point = (code_point << 6) | (next & 0x3Fu);
    }
    if (code_point < min_code_point || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      invalid(i);
    }
    i += length;
  }
  return i;
}

}  // namespace zt::data
