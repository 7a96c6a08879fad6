// Exporting a checkpoint's full weights as one safetensors file (the format of Hugging
// Face's safetensors library: an 8-byte little-endian header length, a JSON header naming
// each tensor's dtype, shape and byte range, then the tensors back to back). The weights are
// the fp32 masters, gathered from every rank's file by parameter; names are the manifest's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/safe_file.h"
#include "runtime/checkpoint/checkpoint_reader.h"

namespace zt::checkpoint {

enum class ExportDType { kF32, kBf16, kF16 };

// Bytes per element of `dtype`, and its name in a safetensors header ("F32", "BF16", "F16").
std::size_t export_element_bytes(ExportDType dtype);
std::string_view safetensors_dtype_text(ExportDType dtype);

// `count` values rounded to nearest even into `dtype`'s 16 bits (bf16 or f16) at `out`.
// Throws Error naming `tensor` when a finite value is beyond f16's range (65504): it would be
// written as infinity, and every logit after it would be lost.
void narrow_to_16_bits(const float* values, std::int64_t count, ExportDType dtype,
                       std::uint16_t* out, std::string_view tensor);

struct ExportSummary {
  std::int64_t tensors = 0;
  std::int64_t parameters = 0;  // elements
  std::uint64_t bytes = 0;      // of the file
};

// Verifies every file of `reader` against its checksum, then writes `out` atomically
// (Note [Replacing an output]: never through a symbolic link or over a directory or device;
// an existing regular file replaced or, with ExistingOutput::kRefuse, refused before the
// checkpoint is read), and never inside the checkpoint it reads (a link into it resolved;
// IoError names both).
// A tied parameter is written once, under the name of the parameter it uses; the header's
// __metadata__ records the tie ("zerotrain.tied": "head.lm_head.weight=embedding.wte") and
// the step. Tensors are converted a bounded piece at a time, so memory stays small.
// One tensor of a safetensors header being written.
struct SafetensorsEntry {
  std::string name;
  std::vector<std::int64_t> shape;
};

// A safetensors header (its JSON, padded with spaces to a multiple of 8 bytes so the data
// starts aligned) for `entries`, all of `dtype`, back to back in the given order, with the
// `metadata` strings. `data_bytes` receives the data section's size.
std::string safetensors_header_text(
    const std::vector<SafetensorsEntry>& entries, ExportDType dtype,
    const std::vector<std::pair<std::string, std::string>>& metadata, std::uint64_t& data_bytes);

ExportSummary export_safetensors(const CheckpointReader& reader, const std::filesystem::path& out,
                                 ExportDType dtype,
                                 data::ExistingOutput existing = data::ExistingOutput::kReplace);

}  // namespace zt::checkpoint
