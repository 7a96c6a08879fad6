// safetensors writing: the header, then each parameter converted piece by piece.
#include "runtime/checkpoint/safetensors_export.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "data/safe_file.h"
#include "runtime/engine/json_text.h"

namespace zt::checkpoint {
namespace {

std::string header_json(const Manifest& manifest, ExportDType dtype, std::uint64_t& data_bytes) {
  std::string ties;
  for (const ManifestParameter& p : manifest.parameters) {
    if (!p.tied_to.empty()) ties += (ties.empty() ? "" : ",") + p.name + "=" + p.tied_to;
  }
  std::vector<std::pair<std::string, std::string>> metadata{
      {"format", "pt"}, {"zerotrain.step", std::to_string(manifest.trainer.step)}};
  if (!ties.empty()) metadata.emplace_back("zerotrain.tied", ties);
  std::vector<SafetensorsEntry> entries;
  for (const ManifestParameter& p : manifest.parameters) {
    if (p.tied_to.empty()) entries.push_back({p.name, p.shape});
  }
  return safetensors_header_text(entries, dtype, metadata, data_bytes);
}

}  // namespace

std::size_t export_element_bytes(ExportDType dtype) { return dtype == ExportDType::kF32 ? 4 : 2; }

std::string_view safetensors_dtype_text(ExportDType dtype) {
  switch (dtype) {
    case ExportDType::kF32:
      return "F32";
    case ExportDType::kBf16:
      return "BF16";
    case ExportDType::kF16:
      return "F16";
  }
  return "F32";
}

void narrow_to_16_bits(const float* values, std::int64_t count, ExportDType dtype,
                       std::uint16_t* out, std::string_view tensor) {
  ZT_CHECK(dtype != ExportDType::kF32, "fp32 is not narrowed");
  if (dtype == ExportDType::kBf16) {
    for (std::int64_t i = 0; i < count; ++i) out[i] = f32_to_bf16_bits(values[i]);
    return;
  }
  for (std::int64_t i = 0; i < count; ++i) {
    out[i] = f32_to_f16_bits(values[i]);
    // An f16 of all-ones exponent is infinity (or NaN, from a NaN that stays one).
    if ((out[i] & 0x7C00u) == 0x7C00u && std::isfinite(values[i])) {
      char value[32];
      std::snprintf(value, sizeof(value), "%g", static_cast<double>(values[i]));
      throw Error("checkpoint export --dtype fp16: tensor '" + std::string(tensor) + "' holds " +
                  value +
                  ", beyond fp16's largest value 65504 (it would be written as "
                  "infinity); export with --dtype bf16 (fp32's range) or fp32");
    }
  }
}

std::string safetensors_header_text(
    const std::vector<SafetensorsEntry>& entries, ExportDType dtype,
    const std::vector<std::pair<std::string, std::string>>& metadata, std::uint64_t& data_bytes) {
  const std::size_t element_bytes = export_element_bytes(dtype);
  std::string json = "{\"__metadata__\":{";
  for (std::size_t i = 0; i < metadata.size(); ++i) {
    json += (i == 0 ? "" : ",") + engine::json_string(metadata[i].first) + ":" +
            engine::json_string(metadata[i].second);
  }
  json += "}";
  data_bytes = 0;
  for (const SafetensorsEntry& entry : entries) {
    std::uint64_t numel = 1;
    for (const std::int64_t d : entry.shape) numel *= static_cast<std::uint64_t>(d);
    const std::uint64_t bytes = numel * element_bytes;
    json += "," + engine::json_string(entry.name) + ":{\"dtype\":\"" +
            std::string(safetensors_dtype_text(dtype)) + "\",\"shape\":[";
    for (std::size_t i = 0; i < entry.shape.size(); ++i) {
      json += (i == 0 ? "" : ",") + std::to_string(entry.shape[i]);
    }
    json += "],\"data_offsets\":[" + std::to_string(data_bytes) + "," +
            std::to_string(data_bytes + bytes) + "]}";
    data_bytes += bytes;
  }
  json += "}";
  // The data starts 8-aligned: the header is padded with spaces, as the format allows.
  while ((json.size() % 8) != 0) json += ' ';
  return json;
}

ExportSummary export_safetensors(const CheckpointReader& reader, const std::filesystem::path& out,
                                 ExportDType dtype, data::ExistingOutput existing) {
  data::check_output_outside(out, "safetensors export", reader.path(), "checkpoint");
  // Checked before the checkpoint is read: a refused OUT is reported at once.
  data::AtomicOutputFile file(out, "safetensors export", std::nullopt, existing);
  reader.verify();
  const Manifest& manifest = reader.manifest();
  std::uint64_t data_bytes = 0;
  const std::string header = header_json(manifest, dtype, data_bytes);
  const std::uint64_t length = header.size();
  file.write(&length, sizeof(length));
  file.write(header.data(), header.size());
  ExportSummary summary;
  constexpr std::int64_t kPiece = std::int64_t{1} << 20;
  std::vector<float> values(static_cast<std::size_t>(kPiece));
  std::vector<std::uint16_t> narrow(dtype == ExportDType::kF32 ? 0 : values.size());
  for (const ManifestParameter& p : manifest.parameters) {
    if (!p.tied_to.empty()) continue;
    for (std::int64_t first = 0; first < p.numel(); first += kPiece) {
      const std::int64_t count = std::min(kPiece, p.numel() - first);
      reader.read(0, p.offset + first, count, values.data());
      if (dtype == ExportDType::kF32) {
        file.write(values.data(), static_cast<std::size_t>(count) * 4);
      } else {
        narrow_to_16_bits(values.data(), count, dtype, narrow.data(), p.name);
        file.write(narrow.data(), static_cast<std::size_t>(count) * 2);
      }
    }
    ++summary.tensors;
    summary.parameters += p.numel();
  }
  file.commit();
  summary.bytes = sizeof(length) + header.size() + data_bytes;
  return summary;
}

}  // namespace zt::checkpoint
