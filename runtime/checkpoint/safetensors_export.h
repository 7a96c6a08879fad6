// Exporting a checkpoint's full weights as one safetensors file (the format of Hugging
// Face's safetensors library: an 8-byte little-endian header length, a JSON header naming
// each tensor's dtype, shape and byte range, then the tensors back to back). The weights are
// the fp32 masters, gathered from every rank's file by parameter; names are the manifest's.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "data/safe_file.h"
#include "runtime/checkpoint/checkpoint_reader.h"

namespace zt::checkpoint {

enum class ExportDType { kF32, kBf16 };

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
