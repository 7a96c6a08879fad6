// Reading safetensors files (Hugging Face's weight format): an 8-byte little-endian header
// length, a JSON header giving each tensor's dtype, shape and byte range (data_offsets,
// relative to the end of the header) and an optional "__metadata__" object of strings,
// then the tensors' bytes. Everything the header claims is checked before a byte of data
// is read; data is read a range at a time (pread), never the whole file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/safe_file.h"

namespace zt::checkpoint {

// The dtypes a header may name. Only the floating ones convert to fp32 weights; the others
// are known so that their sizes can be checked (a bool attention mask buffer, say).
enum class SafetensorsDType { kF64, kF32, kF16, kBf16, kI64, kI32, kI16, kI8, kU8, kBool };

std::string_view safetensors_dtype_name(SafetensorsDType dtype);  // "BF16"
std::size_t safetensors_dtype_bytes(SafetensorsDType dtype);
bool converts_to_f32(SafetensorsDType dtype);  // F32, BF16, F16

struct SafetensorsTensor {
  std::string name;
  SafetensorsDType dtype = SafetensorsDType::kF32;
  std::vector<std::int64_t> shape;  // empty for a scalar
  std::uint64_t data_begin = 0;     // bytes from the start of the file
  std::uint64_t data_bytes = 0;

  std::int64_t numel() const;
  std::string shape_text() const;  // "(64, 192)", "()" for a scalar
};

struct SafetensorsHeader {
  std::vector<SafetensorsTensor> tensors;  // in data order
  std::map<std::string, std::string> metadata;
};

// Parses and checks a header: `json` is the header text, `header_bytes` its length, and
// `file_bytes` the whole file's size. Every tensor's dtype is known, its shape non-negative,
// its data_offsets inside the data section and of shape × dtype size bytes, and no two
// tensors' bytes overlap. Throws FormatError naming `source` and the tensor.
SafetensorsHeader parse_safetensors_header(std::string_view json, std::uint64_t header_bytes,
                                           std::uint64_t file_bytes, const std::string& source);

// Headers longer than this are refused (the format's reference reader allows 100 MB).
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = std::uint64_t{100} << 20;

class SafetensorsFile {
 public:
  // Opens and checks `path` (IoError when it cannot be read, FormatError when it is not a
  // safetensors file; both name it).
  static SafetensorsFile open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_.path(); }
  const SafetensorsHeader& header() const { return header_; }
  // The tensor called `name`, nullptr when the file has none.
  const SafetensorsTensor* find(std::string_view name) const;
  // Elements [first, first + count) of `tensor` (row-major), converted to fp32 into `out`.
  // FormatError naming the file and tensor when its dtype is not a floating one.
  void read_f32(const SafetensorsTensor& tensor, std::int64_t first, std::int64_t count,
                float* out) const;

 private:
  SafetensorsFile(data::InputFile file, SafetensorsHeader header);
  data::InputFile file_;
  SafetensorsHeader header_;
  std::map<std::string, std::size_t, std::less<>> by_name_;
};

}  // namespace zt::checkpoint
