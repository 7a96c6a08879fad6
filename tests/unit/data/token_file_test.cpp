// Token files and prepare-data: round trips at every token width, and each kind of bad
// file fails with an error that names the file and what is wrong.
#include "data/token_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/prepare_data.h"
#include "support/error_message.h"
#include "support/temp_dir.h"

namespace zt::data {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the test temp dir, removed with everything in it.
using zt::testing::TempDir;

std::vector<unsigned char> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::vector<unsigned char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

using zt::testing::message_of;

std::vector<std::int32_t> ramp(std::size_t count, std::int32_t vocab) {
  std::vector<std::int32_t> tokens(count);
  for (std::size_t i = 0; i < count; ++i) {
    tokens[i] = static_cast<std::int32_t>((i * 7919u) % static_cast<std::size_t>(vocab));
  }
  tokens.back() = vocab - 1;
  return tokens;
}

TEST(TokenFile, RoundTripsAtEveryTokenWidth) {
  TempDir dir;
  for (std::int32_t vocab : {2, 256, 257, 65536, 70000}) {
    const fs::path path = dir / ("v" + std::to_string(vocab) + ".bin");
    const auto tokens = ramp(100003, vocab);
    write_token_file(path, tokens, static_cast<std::uint32_t>(vocab));
    const TokenFile file = TokenFile::open(path);
    EXPECT_EQ(file.vocab_size(), static_cast<std::uint32_t>(vocab));
    ASSERT_EQ(file.size(), static_cast<std::int64_t>(tokens.size()));
    EXPECT_TRUE(std::equal(tokens.begin(), tokens.end(), file.tokens().begin())) << vocab;
    EXPECT_EQ(file.token(99999), tokens[99999]);
    std::vector<std::int32_t> range(5);
    file.read(70000, range);
    EXPECT_TRUE(std::equal(range.begin(), range.end(), tokens.begin() + 70000));
    const std::size_t width = vocab <= 256 ? 1 : vocab <= 65536 ? 2 : 4;
    EXPECT_EQ(fs::file_size(path), kTokenFileHeaderBytes + width * tokens.size()) << vocab;
  }
}

TEST(TokenFile, HeaderIsLittleEndianWithTheDocumentedLayout) {
  TempDir dir;
  const fs::path path = dir / "t.bin";
  write_token_file(path, std::vector<std::int32_t>{1, 0x0203}, 0x10000);
  const std::vector<unsigned char> expected = {
      'Z', 'T', 'T', 'O', 'K', 0, 0, 0,  // magic
      1,   0,   0,   0,                  // version
      0,   0,   1,   0,                  // vocab 65536
      2,   0,   0,   0,   0,   0, 0, 0,  // 2 tokens
      2,   0,   0,   0,   0,   0, 0, 0,  // width 2, reserved
      1,   0,   3,   2};                 // tokens
  EXPECT_EQ(read_bytes(path), expected);
}

TEST(TokenFile, WriteLeavesNoTempFileAndReplacesAnOldFile) {
  TempDir dir;
  const fs::path path = dir / "t.bin";
  write_token_file(path, std::vector<std::int32_t>{1, 2, 3}, 4);
  write_token_file(path, std::vector<std::int32_t>{3}, 4);
  EXPECT_FALSE(fs::exists(dir / "t.bin.tmp"));
  EXPECT_EQ(TokenFile::open(path).size(), 1);
}

TEST(TokenFile, WriteRejectsATokenOutsideTheVocabulary) {
  TempDir dir;
  const fs::path path = dir / "t.bin";
  const std::string message = message_of<FormatError>([&] {
    write_token_file(path, std::vector<std::int32_t>{1, 300}, 256);
  });
  EXPECT_CONTAINS(message, "token 300 at position 1 is outside the vocabulary of 256");
  EXPECT_FALSE(fs::exists(path));
}

TEST(TokenFile, BadMagicNamesTheFile) {
  TempDir dir;
  const fs::path path = dir / "notes.txt";
  write_bytes(path, std::vector<unsigned char>(64, 'a'));
  const std::string message = message_of<FormatError>([&] { TokenFile::open(path); });
  EXPECT_CONTAINS(message, path.string());
  EXPECT_CONTAINS(message, "not a zerotrain token file (magic \"aaaaaaaa\"");
  EXPECT_CONTAINS(message, "prepare-data");
}

TEST(TokenFile, FutureVersionIsRejected) {
  TempDir dir;
  const fs::path path = dir / "t.bin";
  write_token_file(path, std::vector<std::int32_t>{1, 2}, 256);
  auto bytes = read_bytes(path);
  bytes[8] = 7;
  write_bytes(path, bytes);
  const std::string message = message_of<FormatError>([&] { TokenFile::open(path); });
  EXPECT_CONTAINS(message, path.string());
  EXPECT_CONTAINS(message, "format version 7 is newer than this zerotrain (1)");
}

TEST(TokenFile, TruncatedFileSaysHowManyTokensItHolds) {
  TempDir dir;
  const fs::path path = dir / "t.bin";
  write_token_file(path, ramp(1000, 256), 256);
  fs::resize_file(path, kTokenFileHeaderBytes + 600);
  const std::string message = message_of<FormatError>([&] { TokenFile::open(path); });
  EXPECT_CONTAINS(message, path.string());
  EXPECT_CONTAINS(message, "truncated: header says 1000 tokens, file holds 600");
  fs::resize_file(path, 20);
  EXPECT_CONTAINS(message_of<FormatError>([&] { TokenFile::open(path); }), "truncated");
}

TEST(TokenFile, TrailingBytesAreRejected) {
  TempDir dir;
  const fs::path path = dir / "t.bin";
  write_token_file(path, ramp(10, 256), 256);
  fs::resize_file(path, kTokenFileHeaderBytes + 13);
  EXPECT_CONTAINS(message_of<FormatError>([&] { TokenFile::open(path); }), "3 bytes follow");
}

TEST(TokenFile, TokenOutsideTheVocabularyNamesItsPosition) {
  TempDir dir;
  const fs::path path = dir / "t.bin";
  write_token_file(path, ramp(20, 1000), 1000);  // 2-byte tokens
  auto bytes = read_bytes(path);
  bytes[12] = 0;  // vocab 1000 -> 256
  bytes[13] = 1;
  const std::size_t at = kTokenFileHeaderBytes + std::size_t{2} * 12;
  bytes[at] = 300 & 0xff;
  bytes[at + 1] = 300 >> 8;
  for (std::size_t i = 0; i < 12; ++i) bytes[kTokenFileHeaderBytes + 2 * i + 1] = 0;
  write_bytes(path, bytes);
  const std::string message = message_of<FormatError>([&] { TokenFile::open(path); });
  EXPECT_CONTAINS(message, path.string());
  EXPECT_CONTAINS(message, "token 300 at position 12 is outside the vocabulary of 256");
}

TEST(TokenFile, EmptyFileIsAFormatError) {
  TempDir dir;
  const fs::path path = dir / "empty.bin";
  write_bytes(path, {});
  const std::string message = message_of<FormatError>([&] { TokenFile::open(path); });
  EXPECT_CONTAINS(message, path.string());
  EXPECT_CONTAINS(message, "empty");
}

TEST(TokenFile, MissingFileIsAnIoError) {
  TempDir dir;
  const fs::path path = dir / "missing.bin";
  const std::string message = message_of<IoError>([&] { TokenFile::open(path); });
  EXPECT_CONTAINS(message, path.string());
  EXPECT_CONTAINS(message, "No such file");
  EXPECT_CONTAINS(message, "zerotrain prepare-data");
  EXPECT_CONTAINS(message_of<IoError>([&] { TokenFile::open(dir / ""); }), "directory");
}

TEST(PrepareData, EachByteOfTheInputIsOneToken) {
  TempDir dir;
  const std::string text = "hello, world\n";
  std::vector<unsigned char> bytes(text.begin(), text.end());
  for (const unsigned char extra : std::vector<unsigned char>{0xff, 0x00, 0x21}) {
    bytes.push_back(extra);
  }
  write_bytes(dir / "in.txt", bytes);
  const PrepareDataStats stats = prepare_data(dir / "in.txt", dir / "out.bin");
  EXPECT_EQ(stats.input_bytes, static_cast<std::int64_t>(bytes.size()));
  EXPECT_EQ(stats.tokens, stats.input_bytes);
  EXPECT_EQ(stats.vocab_size, 256u);
  EXPECT_EQ(stats.distinct_tokens, 13);  // h e l o , space w r d \n \xff \0 !
  const TokenFile file = TokenFile::open(dir / "out.bin");
  EXPECT_EQ(file.vocab_size(), 256u);
  ASSERT_EQ(file.size(), static_cast<std::int64_t>(bytes.size()));
  for (std::size_t i = 0; i < bytes.size(); ++i)
    EXPECT_EQ(file.token(static_cast<std::int64_t>(i)), bytes[i]);
}

TEST(PrepareData, MissingOrEmptyInputNamesTheFile) {
  TempDir dir;
  const std::string missing =
      message_of<IoError>([&] { prepare_data(dir / "absent.txt", dir / "out.bin"); });
  EXPECT_CONTAINS(missing, (dir / "absent.txt").string());
  write_bytes(dir / "empty.txt", {});
  const std::string empty =
      message_of<FormatError>([&] { prepare_data(dir / "empty.txt", dir / "out.bin"); });
  EXPECT_CONTAINS(empty, (dir / "empty.txt").string());
  EXPECT_CONTAINS(empty, "empty");
  EXPECT_FALSE(fs::exists(dir / "out.bin"));
}

}  // namespace
}  // namespace zt::data
