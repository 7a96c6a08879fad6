// The safetensors header checks and the ranged, converting reads.
#include "runtime/checkpoint/safetensors_file.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "core/dtype.h"
#include "core/error.h"
#include "data/json_document.h"

namespace zt::checkpoint {
namespace {

struct DTypeEntry {
  std::string_view name;
  SafetensorsDType dtype;
  std::size_t bytes;
};
constexpr std::array<DTypeEntry, 10> kDTypes{{{"F64", SafetensorsDType::kF64, 8},
                                              {"F32", SafetensorsDType::kF32, 4},
                                              {"F16", SafetensorsDType::kF16, 2},
                                              {"BF16", SafetensorsDType::kBf16, 2},
                                              {"I64", SafetensorsDType::kI64, 8},
                                              {"I32", SafetensorsDType::kI32, 4},
                                              {"I16", SafetensorsDType::kI16, 2},
                                              {"I8", SafetensorsDType::kI8, 1},
                                              {"U8", SafetensorsDType::kU8, 1},
                                              {"BOOL", SafetensorsDType::kBool, 1}}};

const DTypeEntry& entry_of(SafetensorsDType dtype) {
  for (const DTypeEntry& entry : kDTypes) {
    if (entry.dtype == dtype) return entry;
  }
  throw InternalError("unknown safetensors dtype");
}

std::uint64_t non_negative(const data::JsonValue& value, const std::string& what) {
  const std::int64_t n = value.as_integer(what);
  if (n < 0)
    throw FormatError(value.position() + ": " + what + ": negative (" + std::to_string(n) + ")");
  return static_cast<std::uint64_t>(n);
}

SafetensorsTensor parse_tensor(const std::string& name, const data::JsonValue& value,
                               std::uint64_t data_start, std::uint64_t file_bytes,
                               const std::string& source) {
  const std::string where = source + ": tensor '" + name + "'";
  SafetensorsTensor tensor;
  tensor.name = name;
  std::optional<SafetensorsDType> dtype;
  const data::JsonValue* dtype_value = value.find("dtype");
  const data::JsonValue* shape_value = value.find("shape");
  const data::JsonValue* offsets_value = value.find("data_offsets");
  if (dtype_value == nullptr || shape_value == nullptr || offsets_value == nullptr) {
    throw FormatError(where + ": needs \"dtype\", \"shape\" and \"data_offsets\"");
  }
  const std::string& dtype_name = dtype_value->as_string(name + ".dtype");
  for (const DTypeEntry& entry : kDTypes) {
    if (entry.name == dtype_name) dtype = entry.dtype;
  }
  if (!dtype) throw FormatError(where + ": unknown dtype '" + dtype_name + "'");
  tensor.dtype = *dtype;
  std::uint64_t numel = 1;
  for (const data::JsonValue& dim : shape_value->as_array(name + ".shape")) {
    const std::uint64_t n = non_negative(dim, name + ".shape");
    if (n > (std::uint64_t{1} << 62) || __builtin_mul_overflow(numel, n, &numel)) {
      throw FormatError(where + ": shape too large");
    }
    tensor.shape.push_back(static_cast<std::int64_t>(n));
  }
  const std::vector<data::JsonValue>& offsets = offsets_value->as_array(name + ".data_offsets");
  if (offsets.size() != 2) throw FormatError(where + ": data_offsets must be [begin, end]");
  const std::uint64_t begin = non_negative(offsets[0], name + ".data_offsets");
  const std::uint64_t end = non_negative(offsets[1], name + ".data_offsets");
  std::uint64_t expected_bytes = 0;
  if (__builtin_mul_overflow(numel, entry_of(tensor.dtype).bytes, &expected_bytes)) {
    throw FormatError(where + ": shape too large");
  }
  if (end < begin || end - begin != expected_bytes) {
    throw FormatError(where + ": data_offsets [" + std::to_string(begin) + ", " +
                      std::to_string(end) + ") hold " +
                      std::to_string(end < begin ? 0 : end - begin) + " bytes, but " + dtype_name +
                      " " + tensor.shape_text() + " needs " + std::to_string(expected_bytes));
  }
  if (end > file_bytes - data_start) {
    throw FormatError(where + ": data_offsets end at " + std::to_string(end) +
                      ", past the file's " + std::to_string(file_bytes - data_start) +
                      " data bytes: the file is truncated");
  }
  tensor.data_begin = data_start + begin;
  tensor.data_bytes = expected_bytes;
  return tensor;
}

}  // namespace

std::string_view safetensors_dtype_name(SafetensorsDType dtype) { return entry_of(dtype).name; }
std::size_t safetensors_dtype_bytes(SafetensorsDType dtype) { return entry_of(dtype).bytes; }
bool converts_to_f32(SafetensorsDType dtype) {
  return dtype == SafetensorsDType::kF32 || dtype == SafetensorsDType::kBf16 ||
         dtype == SafetensorsDType::kF16;
}

std::int64_t SafetensorsTensor::numel() const {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;
  return n;
}

std::string SafetensorsTensor::shape_text() const {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
  }
  return text + ")";
}

SafetensorsHeader parse_safetensors_header(std::string_view json, std::uint64_t header_bytes,
                                           std::uint64_t file_bytes, const std::string& source) {
  const std::uint64_t data_start = 8 + header_bytes;
  if (header_bytes > kMaxSafetensorsHeaderBytes || data_start > file_bytes) {
    throw FormatError(source + ": the header claims " + std::to_string(header_bytes) +
                      " bytes, more than the file's " + std::to_string(file_bytes) +
                      " (or the 100 MiB limit): not a safetensors file, or truncated");
  }
  const data::JsonValue root = data::parse_json(json, source);
  SafetensorsHeader header;
  for (const auto& [name, value] : root.as_object("safetensors header")) {
    if (name == "__metadata__") {
      for (const auto& [key, text] : value.as_object("__metadata__")) {
        header.metadata[key] = text.as_string("__metadata__." + key);
      }
      continue;
    }
    value.as_object(name);  // a tensor's entry must be an object
    header.tensors.push_back(parse_tensor(name, value, data_start, file_bytes, source));
  }
  std::sort(header.tensors.begin(), header.tensors.end(),
            [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
              return a.data_begin < b.data_begin;
            });
  for (std::size_t i = 1; i < header.tensors.size(); ++i) {
    const SafetensorsTensor& before = header.tensors[i - 1];
    const SafetensorsTensor& after = header.tensors[i];
    if (before.data_begin + before.data_bytes > after.data_begin) {
      throw FormatError(source + ": the bytes of tensors '" + before.name + "' and '" + after.name +
                        "' overlap: the header is damaged");
    }
  }
  return header;
}

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  data::InputFile file = data::InputFile::open(path, "safetensors file");
  const std::string source = data::quoted_path(path);
  if (file.size_bytes() < 8) {
    throw FormatError("safetensors file " + source + " has " + std::to_string(file.size_bytes()) +
                      " bytes, too few for its header length");
  }
  unsigned char length_bytes[8];
  file.read_at(0, length_bytes, sizeof(length_bytes));
  std::uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | length_bytes[i];
  if (header_bytes > kMaxSafetensorsHeaderBytes || 8 + header_bytes > file.size_bytes()) {
    throw FormatError("safetensors file " + source + ": the header claims " +
                      std::to_string(header_bytes) + " bytes, but the file has " +
                      std::to_string(file.size_bytes()) +
                      ": it is not a safetensors file, or it is truncated");
  }
  std::string json(static_cast<std::size_t>(header_bytes), '\0');
  if (!json.empty()) file.read_at(8, json.data(), json.size());
  SafetensorsHeader header =
      parse_safetensors_header(json, header_bytes, file.size_bytes(), "safetensors file " + source);
  return SafetensorsFile(std::move(file), std::move(header));
}

SafetensorsFile::SafetensorsFile(data::InputFile file, SafetensorsHeader header)
    : file_(std::move(file)), header_(std::move(header)) {
  for (std::size_t i = 0; i < header_.tensors.size(); ++i) by_name_[header_.tensors[i].name] = i;
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &header_.tensors[it->second];
}

void SafetensorsFile::read_f32(const SafetensorsTensor& tensor, std::int64_t first,
                               std::int64_t count, float* out) const {
  ZT_CHECK(first >= 0 && count >= 0 && first + count <= tensor.numel(),
           "SafetensorsFile::read_f32 out of range");
  if (!converts_to_f32(tensor.dtype)) {
    throw FormatError("safetensors file " + data::quoted_path(path()) + ": tensor '" + tensor.name +
                      "' is " + std::string(safetensors_dtype_name(tensor.dtype)) +
                      "; weights must be F32, BF16 or F16");
  }
  if (count == 0) return;
  const std::size_t element_bytes = safetensors_dtype_bytes(tensor.dtype);
  const std::uint64_t offset =
      tensor.data_begin + static_cast<std::uint64_t>(first) * element_bytes;
  if (tensor.dtype == SafetensorsDType::kF32) {
    file_.read_at(offset, out, static_cast<std::size_t>(count) * 4);
    return;
  }
  // 16-bit values are read into the second half of `out` and widened front to back: element
  // i's 2 bytes lie at byte 2 count + 2 i, after the 4 (i + 1) bytes written up to it.
  auto* bytes = reinterpret_cast<unsigned char*>(out);
  const std::size_t narrow_begin = static_cast<std::size_t>(count) * 2;
  file_.read_at(offset, bytes + narrow_begin, static_cast<std::size_t>(count) * 2);
  const bool bf16 = tensor.dtype == SafetensorsDType::kBf16;
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint16_t bits = 0;
    std::memcpy(&bits, bytes + narrow_begin + static_cast<std::size_t>(i) * 2, 2);
    out[i] = bf16 ? bf16_bits_to_f32(bits) : f16_bits_to_f32(bits);
  }
}

}  // namespace zt::checkpoint
