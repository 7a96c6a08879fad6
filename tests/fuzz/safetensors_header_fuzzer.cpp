// Fuzzes the safetensors header checks that checkpoint.init_from relies on: any bytes, taken
// as a whole file (8-byte length, JSON header, data), are either refused with a FormatError
// or give tensors whose bytes lie inside the data section, match shape x dtype size and do
// not overlap, so no later ranged read can leave the file or misread a neighbour.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "fuzz_check.h"
#include "runtime/checkpoint/safetensors_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 8) return 0;
  std::uint64_t header_bytes = 0;
  for (std::size_t i = 0; i < 8; ++i)
    header_bytes |= static_cast<std::uint64_t>(data[i]) << (8 * i);
  if (header_bytes > size - 8) return 0;  // SafetensorsFile::open refuses it before parsing
  const std::string_view json(reinterpret_cast<const char*>(data) + 8,
                              static_cast<std::size_t>(header_bytes));
  zt::checkpoint::SafetensorsHeader header;
  if (!zt::fuzz::accepts<zt::FormatError>([&] {
        header = zt::checkpoint::parse_safetensors_header(json, header_bytes, size, "fuzz");
      })) {
    return 0;
  }
  std::uint64_t previous_end = 8 + header_bytes;
  for (const zt::checkpoint::SafetensorsTensor& tensor : header.tensors) {
    if (tensor.data_begin < previous_end) zt::fuzz::fail("overlapping or misplaced tensor bytes");
    if (tensor.data_begin + tensor.data_bytes > size) zt::fuzz::fail("tensor bytes past the end");
    const auto numel = static_cast<std::uint64_t>(tensor.numel());
    if (numel * zt::checkpoint::safetensors_dtype_bytes(tensor.dtype) != tensor.data_bytes) {
      zt::fuzz::fail("tensor bytes disagree with its shape and dtype");
    }
    previous_end = tensor.data_begin + tensor.data_bytes;
  }
  return 0;
}
