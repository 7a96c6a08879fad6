// Byte-level BPE: GPT-2's byte alphabet, merges by rank, decoding, the same ids from a
// stream cut anywhere as from the whole text, llm.c's file header, and tokenizer files
// that cannot be used refused with the file and field named.
#include "data/bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/bpe_stream_encoder.h"
#include "data/byte_level_alphabet.h"
#include "data/llmc_token_file_writer.h"
#include "data/prepare_data.h"
#include "support/temp_dir.h"

namespace zt::data {
namespace {

namespace fs = std::filesystem;
using zt::testing::TempDir;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string json_quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A tokenizer.json: the 256 byte tokens (ids 0..255 in byte order), then one token per
// merge, in order; `model_type` and `pre_tokenizer` replace their parts.
std::string tokenizer_json(
    const std::vector<std::pair<std::string, std::string>>& merges,
    const std::string& model_type = "BPE",
    const std::string& pre_tokenizer = R"({"type": "ByteLevel", "add_prefix_space": false})") {
  std::string vocab;
  for (unsigned b = 0; b < 256; ++b) {
    vocab += (b ? ", " : "") + json_quoted(byte_level_symbol(static_cast<unsigned char>(b))) +
             ": " + std::to_string(b);
  }
  std::string merge_list;
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const std::string left = byte_level_symbols(merges[i].first);
    const std::string right = byte_level_symbols(merges[i].second);
    vocab += ", " + json_quoted(left + right) + ": " + std::to_string(256 + i);
    merge_list += (i ? ", " : "") + json_quoted(left + " " + right);
  }
  return R"({"version": "1.0", "added_tokens": [{"id": )" + std::to_string(256 + merges.size()) +
         R"(, "content": "<|endoftext|>", "special": true}],
  "normalizer": null, "pre_tokenizer": )" +
         pre_tokenizer + R"(, "post_processor": null, "decoder": {"type": "ByteLevel"},
  "model": {"type": ")" +
         model_type + R"(", "dropout": null, "vocab": {)" + vocab + R"(},
  "merges": [)" +
         merge_list + "]}}\n";
}

BpeTokenizer load_json(const TempDir& dir, const std::string& text) {
  write_text(dir / "tokenizer.json", text);
  return BpeTokenizer::load(dir / "tokenizer.json");
}

TEST(BpeTokenizer, TokenIdFindsAddedAndVocabularyTokensByTheirText) {
  const TempDir dir;
  const BpeTokenizer tokenizer = load_json(dir, tokenizer_json({{"a", "b"}}));
  EXPECT_EQ(tokenizer.token_id("<|endoftext|>"), std::optional<std::int32_t>(257));
  EXPECT_EQ(tokenizer.token_id("ab"), std::optional<std::int32_t>(256));
  EXPECT_EQ(tokenizer.token_id(" "),
            std::optional<std::int32_t>(32));  // the byte-level token of a space
  EXPECT_EQ(tokenizer.token_id("</s>"), std::nullopt);
}

template <typename F>
std::string format_error_of(F&& f) {
  try {
    f();
  } catch (const FormatError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a FormatError";
  return "";
}

TEST(ByteLevelAlphabet, MapsAsGpt2EncoderDoes) {
  EXPECT_EQ(byte_level_symbol(' '), "\xC4\xA0");   // 'Ġ' U+0120
  EXPECT_EQ(byte_level_symbol('\n'), "\xC4\x8A");  // 'Ċ' U+010A
  EXPECT_EQ(byte_level_symbol('a'), "a");
  EXPECT_EQ(byte_level_symbol(0xAD), "\xC5\x83");  // the last extra, U+0143
  EXPECT_EQ(byte_level_symbol(0xE9), "\xC3\xA9");  // Latin-1 keeps its code point
  std::string all;
  for (unsigned b = 0; b < 256; ++b) all += static_cast<char>(b);
  EXPECT_EQ(byte_level_bytes(byte_level_symbols(all)), all);
  EXPECT_EQ(byte_level_bytes("\xE2\x82\xAC"), std::nullopt);  // '€' is not in the alphabet
}

TEST(BpeTokenizer, MergesLowestRankFirstAndDecodesBack) {
  TempDir dir;
  // Ranks: "e r" first, then "h e"; "her" needs h + er, which is not a merge.
  BpeTokenizer tokenizer = load_json(
      dir, tokenizer_json({{"e", "r"}, {"h", "e"}, {" ", "h"}, {" h", "e"}, {"he", "r"}}));
  EXPECT_EQ(tokenizer.vocab_size(), 256u + 5 + 1);
  std::vector<std::int32_t> ids;
  tokenizer.encode("her", ids);
  EXPECT_EQ(ids, (std::vector<std::int32_t>{'h', 256}));  // "er" wins over "he"
  ids.clear();
  tokenizer.encode("he hehe", ids);
  // "he" | " hehe": in the second pre-token both "h e" (rank 1) go before " h" (rank 2),
  // which then never forms, so " he" (rank 3) does not either.
  EXPECT_EQ(ids, (std::vector<std::int32_t>{257, ' ', 257, 257}));
  EXPECT_EQ(tokenizer.decode(ids), "he hehe");
  EXPECT_EQ(tokenizer.decode(std::vector<std::int32_t>{261}), "<|endoftext|>");
  const std::string error = format_error_of([&] {
    tokenizer.decode(std::vector<std::int32_t>{1, 9999});
  });
  EXPECT_NE(error.find("token 9999 at position 1"), std::string::npos) << error;
}

TEST(BpeStreamEncoder, AnyChunkingGivesTheIdsOfTheWholeText) {
  TempDir dir;
  BpeTokenizer tokenizer = load_json(
      dir, tokenizer_json({{" ", " "}, {"  ", "  "}, {"'", "l"}, {"'l", "l"}, {"a", "b"}}));
  const std::string text =
      "ab ab's we'll  ab\n\n   x  \xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80!! 123 4\t\t ab'll'     ";
  std::vector<std::int32_t> whole;
  tokenizer.encode(text, whole);
  for (std::size_t chunk = 1; chunk <= text.size(); ++chunk) {
    BpeStreamEncoder encoder(tokenizer, "text");
    std::vector<std::int32_t> streamed;
    for (std::size_t at = 0; at < text.size(); at += chunk) {
      encoder.feed(std::string_view(text).substr(at, chunk), streamed);
    }
    encoder.finish(streamed);
    ASSERT_EQ(streamed, whole) << "chunks of " << chunk << " bytes";
  }
  EXPECT_EQ(tokenizer.decode(whole), text);
}

// The tokenizer of tokenizer_json with more added tokens, `added` being JSON objects.
std::string with_added_tokens(std::string json, const std::string& added) {
  const std::string end = R"("special": true}])";
  json.replace(json.find(end), end.size(), R"("special": true}, )" + added + "]");
  return json;
}

// `json` without its added tokens: a tokenizer that encodes everything as ordinary text.
std::string without_added_tokens(std::string json) {
  const std::string begin = R"("added_tokens": [)";
  const std::size_t from = json.find(begin) + begin.size();
  json.erase(from, json.find("],\n  \"normalizer\"") - from);
  return json;
}

// The ids of ordinary[0], added[0], ordinary[1], added[1], ...: `plain` encodes the ordinary
// text (a tokenizer without added tokens, else the same).
std::vector<std::int32_t> ordinary_then(BpeTokenizer& plain,
                                        const std::vector<std::string>& ordinary,
                                        const std::vector<std::int32_t>& added) {
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < ordinary.size(); ++i) {
    plain.encode(ordinary[i], ids);
    if (i < added.size()) ids.push_back(added[i]);
  }
  return ids;
}

TEST(BpeTokenizer, EncodesAddedTokensWrittenInTheTextAsTheirIds) {
  TempDir dir;
  BpeTokenizer tokenizer =
      load_json(dir, with_added_tokens(tokenizer_json({{"a", "b"}}),
                                       R"({"id": 258, "content": "<|end|>", "normalized": false},
                                {"id": 259, "content": "<|end|>!!", "normalized": false})"));
  std::vector<std::int32_t> ids;
  tokenizer.encode("<|endoftext|>ab<|endoftext|><|endoftext|> ab", ids);
  EXPECT_EQ(ids, (std::vector<std::int32_t>{257, 256, 257, 257, ' ', 256}));
  // Longest first where two start at the same place; a token cut short is ordinary text.
  ids.clear();
  tokenizer.encode("<|end|>!!<|end|>!<|endoftext|<|end", ids);
  TempDir plain_dir;
  BpeTokenizer plain = load_json(plain_dir, without_added_tokens(tokenizer_json({{"a", "b"}})));
  EXPECT_EQ(ids, ordinary_then(plain, {"", "", "!", "<|endoftext|<|end"}, {259, 258}));
  EXPECT_EQ(tokenizer.decode(ids), "<|end|>!!<|end|>!<|endoftext|<|end");
}

TEST(BpeTokenizer, FindsAnAddedTokenByItsText) {
  TempDir dir;
  BpeTokenizer tokenizer = load_json(dir, tokenizer_json({{"a", "b"}}));
  EXPECT_EQ(tokenizer.added_token_id("<|endoftext|>"), 257);
  EXPECT_EQ(tokenizer.added_token_id("<|nope|>"), std::nullopt);
}

TEST(BpeTokenizer, AddsThePrefixSpaceToEachPieceBetweenAddedTokens) {
  TempDir dir;
  BpeTokenizer tokenizer = load_json(
      dir,
      tokenizer_json({{"a", "b"}}, "BPE", R"({"type": "ByteLevel", "add_prefix_space": true})"));
  std::vector<std::int32_t> ids;
  tokenizer.encode("ab<|endoftext|>ab<|endoftext|> ab", ids);
  EXPECT_EQ(ids, (std::vector<std::int32_t>{' ', 256, 257, ' ', 256, 257, ' ', 256}));
}

TEST(BpeTokenizerFile, RefusesAddedTokensThatStripOrMatchWholeWords) {
  TempDir dir;
  const std::string error = format_error_of([&] {
    load_json(dir, with_added_tokens(tokenizer_json({}),
                                     R"({"id": 300, "content": "<mask>", "lstrip": true})"));
  });
  EXPECT_NE(error.find("added_tokens[1].lstrip (of \"<mask>\") is true"), std::string::npos)
      << error;
}

// Streams `text` cut at every offset into two chunks, and in chunks of every size; each
// must give `whole`.
void expect_every_cut_gives(BpeTokenizer& tokenizer, const std::string& text,
                            const std::vector<std::int32_t>& whole) {
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    BpeStreamEncoder encoder(tokenizer, "text");
    std::vector<std::int32_t> streamed;
    encoder.feed(std::string_view(text).substr(0, cut), streamed);
    encoder.feed(std::string_view(text).substr(cut), streamed);
    encoder.finish(streamed);
    ASSERT_EQ(streamed, whole) << "cut at byte " << cut;
  }
  for (std::size_t chunk = 1; chunk <= text.size(); ++chunk) {
    BpeStreamEncoder encoder(tokenizer, "text");
    std::vector<std::int32_t> streamed;
    for (std::size_t at = 0; at < text.size(); at += chunk) {
      encoder.feed(std::string_view(text).substr(at, chunk), streamed);
    }
    encoder.finish(streamed);
    ASSERT_EQ(streamed, whole) << "chunks of " << chunk << " bytes";
  }
}

TEST(BpeStreamEncoder, AddedTokenCutAcrossChunksGivesTheIdsOfTheWholeText) {
  TempDir dir;
  for (const char* prefix_space : {"false", "true"}) {
    SCOPED_TRACE(std::string("add_prefix_space ") + prefix_space);
    const std::string json = tokenizer_json(
        {{"a", "b"}, {" ", " "}}, "BPE",
        std::string(R"({"type": "ByteLevel", "add_prefix_space": )") + prefix_space + "}");
    BpeTokenizer plain = load_json(dir, without_added_tokens(json));
    BpeTokenizer tokenizer =
        load_json(dir, with_added_tokens(json,
                                         R"({"id": 259, "content": "<|end|>", "normalized": false},
                    {"id": 260, "content": "<|end|>!!", "normalized": false})"));
    const std::string text =
        "ab <|endoftext|>ab's  <|end|>!!<|end|>!<|endof <|endoftext|><|endoftext|>we'll  "
        "<|endoftext|";
    std::vector<std::int32_t> whole;
    tokenizer.encode(text, whole);
    EXPECT_EQ(whole,
              ordinary_then(plain, {"ab ", "ab's  ", "", "!<|endof ", "", "we'll  <|endoftext|"},
                            {258, 260, 259, 258, 258}));
    expect_every_cut_gives(tokenizer, text, whole);
  }
}

TEST(BpeStreamEncoder, NamesTheOffsetOfTextThatIsNotUtf8) {
  TempDir dir;
  BpeTokenizer tokenizer = load_json(dir, tokenizer_json({}));
  BpeStreamEncoder encoder(tokenizer, "input text 'x.txt'");
  std::vector<std::int32_t> ids;
  const std::string error = format_error_of([&] {
    encoder.feed("abc\xC3", ids);
    encoder.feed("(d", ids);
  });
  EXPECT_NE(error.find("input text 'x.txt': byte 3 is not UTF-8"), std::string::npos) << error;
}

TEST(PrepareDataBpe, WritesLlmcHeaderAndTokens) {
  TempDir dir;
  BpeTokenizer tokenizer = load_json(dir, tokenizer_json({{"a", "b"}}));
  write_text(dir / "in.txt", "ab ab");
  const PrepareDataStats stats = prepare_data(dir / "in.txt", dir / "out.bin", tokenizer);
  EXPECT_EQ(stats.tokens, 3);  // "ab", " ", "ab"
  EXPECT_STREQ(stats.format, "llm.c");
  std::ifstream in(dir / "out.bin", std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ASSERT_EQ(bytes.size(), 256 * 4 + 3 * 2);
  std::int32_t header[3];
  std::memcpy(header, bytes.data(), sizeof(header));
  EXPECT_EQ(header[0], kLlmcMagicU16);
  EXPECT_EQ(header[1], kLlmcVersionU16);
  EXPECT_EQ(header[2], 3);
  std::uint16_t tokens[3];
  std::memcpy(tokens, bytes.data() + 1024, sizeof(tokens));
  EXPECT_EQ(tokens[0], 256);
  EXPECT_EQ(tokens[1], ' ');
  EXPECT_EQ(tokens[2], 256);
}

TEST(LlmcTokenFileWriter, UsesUint32PastSixtyFiveThousandTokens) {
  TempDir dir;
  LlmcTokenFileWriter writer(dir / "big.bin", 70000);
  writer.append(std::vector<std::int32_t>{69999, 5});
  writer.finish();
  std::ifstream in(dir / "big.bin", std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ASSERT_EQ(bytes.size(), 256 * 4 + 2 * 4);
  std::int32_t header[3];
  std::memcpy(header, bytes.data(), sizeof(header));
  EXPECT_EQ(header[0], kLlmcMagicU32);
  EXPECT_EQ(header[1], kLlmcVersionU32);
  EXPECT_EQ(header[2], 2);
  std::uint32_t first = 0;
  std::memcpy(&first, bytes.data() + 1024, 4);
  EXPECT_EQ(first, 69999u);
}

TEST(PrepareDataBpe, EmptyInputSaysItMakesZeroTokens) {
  TempDir dir;
  BpeTokenizer tokenizer = load_json(dir, tokenizer_json({}));
  write_text(dir / "empty.txt", "");
  const std::string error =
      format_error_of([&] { prepare_data(dir / "empty.txt", dir / "out.bin", tokenizer); });
  EXPECT_NE(error.find("empty.txt' is empty: it encodes to zero tokens"), std::string::npos)
      << error;
  EXPECT_FALSE(fs::exists(dir / "out.bin"));
}

TEST(BpeTokenizerFile, RefusesAModelThatIsNotBpe) {
  TempDir dir;
  const std::string error =
      format_error_of([&] { load_json(dir, tokenizer_json({}, "WordPiece")); });
  EXPECT_NE(error.find("tokenizer.json:"), std::string::npos) << error;
  EXPECT_NE(error.find("model.type is \"WordPiece\""), std::string::npos) << error;
}

TEST(BpeTokenizerFile, RefusesAPreTokenizerItDoesNotImplement) {
  TempDir dir;
  const std::string error = format_error_of([&] {
    load_json(dir, tokenizer_json({}, "BPE", R"({"type": "Sequence", "pretokenizers": []})"));
  });
  EXPECT_NE(error.find("tokenizer.json:"), std::string::npos) << error;
  EXPECT_NE(error.find("pre_tokenizer.type is \"Sequence\""), std::string::npos) << error;
  EXPECT_NE(error.find("GPT-2's pattern"), std::string::npos) << error;
}

TEST(BpeTokenizerFile, NamesTheLineAndColumnOfMalformedJson) {
  TempDir dir;
  const std::string error = format_error_of([&] { load_json(dir, "{\"model\": {\n  \"type\" 1"); });
  EXPECT_NE(error.find("tokenizer.json:2:10: malformed JSON: expected ':'"), std::string::npos)
      << error;
}

TEST(BpeTokenizerFile, RefusesAMergeNamingAnUnknownToken) {
  TempDir dir;
  std::string text = tokenizer_json({{"a", "b"}});
  text.replace(text.find("\"a b\""), 5, "\"a zq\"");
  const std::string error = format_error_of([&] { load_json(dir, text); });
  EXPECT_NE(error.find("model.merges[0]: merge \"a zq\" names \"zq\""), std::string::npos) << error;
}

TEST(BpeTokenizerFile, ReadsGpt2VocabAndMergesTxt) {
  TempDir dir;
  std::string vocab = "{";
  for (unsigned b = 0; b < 256; ++b) {
    vocab += (b ? ", " : "") + json_quoted(byte_level_symbol(static_cast<unsigned char>(b))) +
             ": " + std::to_string(b);
  }
  vocab += ", \"\xC4\xA0t\": 256}";
  write_text(dir / "vocab.json", vocab);
  write_text(dir / "merges.txt", "#version: 0.2\n\xC4\xA0 t\n");
  BpeTokenizer tokenizer = BpeTokenizer::load(dir / "vocab.json");
  std::vector<std::int32_t> ids;
  tokenizer.encode("a t", ids);
  EXPECT_EQ(ids, (std::vector<std::int32_t>{'a', 256}));
  write_text(dir / "merges.txt", "#version: 0.2\n\xC4\xA0 x\n");
  const std::string error = format_error_of([&] { BpeTokenizer::load(dir / "vocab.json"); });
  EXPECT_NE(error.find("merges.txt:2: merge"), std::string::npos) << error;
}

}  // namespace
}  // namespace zt::data
