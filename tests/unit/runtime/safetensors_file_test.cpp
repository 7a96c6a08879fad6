// The safetensors reader: values of every floating dtype read as fp32 a range at a time,
// sharded sets resolved through their index, and every kind of damaged header refused
// naming the file and the tensor.
#include "runtime/checkpoint/safetensors_file.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "runtime/checkpoint/hf_weights.h"
#include "runtime/checkpoint/safetensors_export.h"
#include "support/error_message.h"
#include "support/temp_dir.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

// A safetensors file of `header` and `data` exactly as given (no checks: tests damage them).
void write_raw(const fs::path& path, const std::string& header, const std::string& data,
               std::uint64_t claimed_length = UINT64_MAX) {
  std::ofstream out(path, std::ios::binary);
  const std::uint64_t length = claimed_length == UINT64_MAX ? header.size() : claimed_length;
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((length >> (8 * i)) & 0xff));
  out << header << data;
}

std::string bytes_of(const void* data, std::size_t n) {
  return std::string(static_cast<const char*>(data), n);
}

TEST(SafetensorsFile, ReadsEveryFloatingDTypeAsF32ARangeAtATime) {
  const testing::TempDir dir;
  const std::vector<float> f32{1.5f, -2.25f, 3.0f, 0.125f, 7.0f, -0.5f};
  std::vector<std::uint16_t> bf16;
  std::vector<std::uint16_t> f16;
  for (const float v : f32) {
    bf16.push_back(f32_to_bf16_bits(v));
    f16.push_back(f32_to_f16_bits(v));
  }
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
      R"("b":{"dtype":"BF16","shape":[6],"data_offsets":[24,36]},)"
      R"("c":{"dtype":"F16","shape":[3,2],"data_offsets":[36,48]}})";
  write_raw(dir / "m.safetensors", header,
            bytes_of(f32.data(), 24) + bytes_of(bf16.data(), 12) + bytes_of(f16.data(), 12));
  const SafetensorsFile file = SafetensorsFile::open(dir / "m.safetensors");
  EXPECT_EQ(file.header().metadata.at("format"), "pt");
  ASSERT_EQ(file.header().tensors.size(), 3u);
  for (const char* name : {"a", "b", "c"}) {
    const SafetensorsTensor* tensor = file.find(name);
    ASSERT_NE(tensor, nullptr) << name;
    std::vector<float> all(6, -1.0f);
    file.read_f32(*tensor, 0, 6, all.data());
    EXPECT_EQ(all, f32) << name;  // the values are exact in every dtype
    std::vector<float> middle(3, -1.0f);
    file.read_f32(*tensor, 2, 3, middle.data());
    EXPECT_EQ(middle, std::vector<float>(f32.begin() + 2, f32.begin() + 5)) << name;
  }
  EXPECT_EQ(file.find("a")->shape_text(), "(2, 3)");
  EXPECT_EQ(file.find("d"), nullptr);
}

TEST(SafetensorsFile, RefusesToReadAnIntegerTensorAsWeights) {
  const testing::TempDir dir;
  write_raw(dir / "m.safetensors", R"({"mask":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})",
            std::string(2, '\1'));
  const SafetensorsFile file = SafetensorsFile::open(dir / "m.safetensors");
  float out[2];
  const std::string message =
      testing::message_of<FormatError>([&] { file.read_f32(*file.find("mask"), 0, 2, out); });
  EXPECT_CONTAINS(message, "'mask' is BOOL");
  EXPECT_CONTAINS(message, "m.safetensors");
}

struct DamagedCase {
  const char* what;
  std::string header;
  std::string data;
  std::uint64_t claimed_length;
  const char* expected;  // part of the message
};

TEST(SafetensorsFile, RefusesDamagedHeadersNamingFileAndTensor) {
  const std::string w = R"("w":{"dtype":"F32","shape":[2],"data_offsets":)";
  const std::vector<DamagedCase> cases{
      {"empty header", "", "", UINT64_MAX, "unexpected end of text"},
      {"length past the end", "{}", "", 1000, "the header claims 1000 bytes"},
      {"not JSON", "{\"w\":", "", UINT64_MAX, "m.safetensors"},
      {"not an object", "[1]", "", UINT64_MAX, "expected an object"},
      {"unknown dtype", R"({"w":{"dtype":"F8","shape":[2],"data_offsets":[0,2]}})",
       std::string(2, '\0'), UINT64_MAX, "tensor 'w': unknown dtype 'F8'"},
      {"missing field", R"({"w":{"dtype":"F32","shape":[2]}})", "", UINT64_MAX,
       "tensor 'w': needs"},
      {"bytes do not match the shape", "{" + w + "[0,4]}}", std::string(8, '\0'), UINT64_MAX,
       "tensor 'w': data_offsets [0, 4) hold 4 bytes, but F32 (2) needs 8"},
      {"past the end", "{" + w + "[0,8]}}", std::string(4, '\0'), UINT64_MAX,
       "tensor 'w': data_offsets end at 8, past the file's 4 data bytes"},
      {"reversed offsets", "{" + w + "[8,0]}}", std::string(8, '\0'), UINT64_MAX, "tensor 'w'"},
      {"negative dimension", R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})",
       std::string(8, '\0'), UINT64_MAX, "negative"},
      {"huge shape",
       R"({"w":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}})",
       std::string(8, '\0'), UINT64_MAX, "tensor 'w': shape too large"},
      {"overlap", "{" + w + R"([0,8]},"v":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
       std::string(12, '\0'), UINT64_MAX, "tensors 'w' and 'v' overlap"},
  };
  const testing::TempDir dir;
  for (const DamagedCase& c : cases) {
    write_raw(dir / "m.safetensors", c.header, c.data, c.claimed_length);
    const std::string message =
        testing::message_of<Error>([&] { (void)SafetensorsFile::open(dir / "m.safetensors"); });
    EXPECT_CONTAINS(message, c.expected) << c.what;
    EXPECT_CONTAINS(message, "m.safetensors") << c.what;
  }
  std::ofstream(dir / "short.safetensors", std::ios::trunc) << "abc";
  EXPECT_CONTAINS(
      testing::message_of<Error>([&] { (void)SafetensorsFile::open(dir / "short.safetensors"); }),
      "'" + (dir / "short.safetensors").string() + "' has 3 bytes, too few for its header length");
}

TEST(HfWeights, ResolvesAShardedSetThroughItsIndex) {
  const testing::TempDir dir;
  const float one[2] = {1.0f, 2.0f};
  const float two[2] = {3.0f, 4.0f};
  write_raw(dir / "a.safetensors", R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
            bytes_of(one, 8));
  write_raw(dir / "b.safetensors", R"({"y":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
            bytes_of(two, 8));
  std::ofstream(dir / "model.safetensors.index.json")
      << R"({"metadata":{},"weight_map":{"x":"a.safetensors","y":"b.safetensors"}})";
  const HfWeights weights(dir.path());  // the directory finds its index
  ASSERT_EQ(weights.tensors().size(), 2u);
  const HfTensorRef* y = weights.find("y");
  ASSERT_NE(y, nullptr);
  float out[2];
  y->file->read_f32(*y->tensor, 0, 2, out);
  EXPECT_EQ(out[0], 3.0f);
  EXPECT_EQ(out[1], 4.0f);

  std::ofstream(dir / "model.safetensors.index.json", std::ios::trunc)
      << R"({"weight_map":{"x":"b.safetensors"}})";
  EXPECT_CONTAINS(testing::message_of<Error>([&] { HfWeights{dir.path()}; }), "puts tensor 'x' in");
  std::ofstream(dir / "model.safetensors.index.json", std::ios::trunc)
      << R"({"weight_map":{"x":"../a.safetensors"}})";
  EXPECT_CONTAINS(testing::message_of<Error>([&] { HfWeights{dir.path()}; }),
                  "expected a file name beside the index");
  std::ofstream(dir / "model.safetensors.index.json", std::ios::trunc)
      << R"({"weight_map":{"x":"gone.safetensors"}})";
  EXPECT_CONTAINS(testing::message_of<Error>([&] { HfWeights{dir.path()}; }), "gone.safetensors");
  std::ofstream(dir / "model.safetensors.index.json", std::ios::trunc) << R"({"x":1})";
  EXPECT_CONTAINS(testing::message_of<Error>([&] { HfWeights{dir.path()}; }), "no \"weight_map\"");
}

TEST(HfWeights, NamesADirectoryWithoutWeights) {
  const testing::TempDir dir;
  EXPECT_CONTAINS(testing::message_of<IoError>([&] { HfWeights{dir.path()}; }),
                  "holds neither model.safetensors nor model.safetensors.index.json");
  EXPECT_CONTAINS(testing::message_of<IoError>([&] { HfWeights{dir / "nothing.safetensors"}; }),
                  "nothing.safetensors");
}

// Narrowing for `checkpoint export --dtype fp16`: to nearest even, infinity kept, and a finite
// value beyond f16's range refused naming the tensor rather than written as infinity.
TEST(SafetensorsExport, NarrowingToF16RefusesAFiniteValueBeyondItsRange) {
  const std::vector<float> fits{65504.0f, 65519.0f, -1.5f, std::numeric_limits<float>::infinity()};
  std::vector<std::uint16_t> out(fits.size());
  narrow_to_16_bits(fits.data(), 4, ExportDType::kF16, out.data(), "t");
  EXPECT_EQ(out, (std::vector<std::uint16_t>{0x7BFF, 0x7BFF, 0xBE00, 0x7C00}));
  const std::vector<float> big{1.0f, 65520.0f};
  try {
    narrow_to_16_bits(big.data(), 2, ExportDType::kF16, out.data(), "block.0.attn.qkv.weight");
    FAIL() << "65520 rounds to infinity in f16";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'block.0.attn.qkv.weight' holds 65520"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--dtype bf16"), std::string::npos) << e.what();
  }
  narrow_to_16_bits(big.data(), 2, ExportDType::kBf16, out.data(), "t");
  EXPECT_EQ(out[1], f32_to_bf16_bits(65520.0f));
}

}  // namespace
}  // namespace zt::checkpoint
