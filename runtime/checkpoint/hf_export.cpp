// Writing a checkpoint's masters under Hugging Face names, Conv1D weights transposed back.
#include "runtime/checkpoint/hf_export.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "core/config/config_loader.h"
#include "core/dtype.h"
#include "core/error.h"
#include "data/bpe_tokenizer.h"
#include "data/safe_file.h"
#include "runtime/checkpoint/hf_config.h"
#include "runtime/checkpoint/hf_names.h"

namespace zt::checkpoint {
namespace {

// The most elements read at once (4 MiB of fp32), or one row.
constexpr std::int64_t kPieceElements = std::int64_t{1} << 20;

// Writes `values` of `tensor` at byte `offset` of `file`, narrowed to bf16 or f16 when asked.
void write_values(data::AtomicOutputFile& file, std::uint64_t offset, const float* values,
                  std::int64_t count, ExportDType dtype, std::vector<std::uint16_t>& narrow,
                  std::string_view tensor) {
  if (dtype == ExportDType::kF32) {
    file.write_at(offset, values, static_cast<std::size_t>(count) * 4);
    return;
  }
  narrow.resize(static_cast<std::size_t>(count));
  narrow_to_16_bits(values, count, dtype, narrow.data(), tensor);
  file.write_at(offset, narrow.data(), static_cast<std::size_t>(count) * 2);
}

// config.json's torch_dtype for the tensors' dtype.
std::string_view torch_dtype_of(ExportDType dtype) {
  switch (dtype) {
    case ExportDType::kF32:
      return "float32";
    case ExportDType::kBf16:
      return "bfloat16";
    case ExportDType::kF16:
      return "float16";
  }
  return "float32";
}

Config config_of(const CheckpointReader& reader) {
  const std::string manifest = (reader.path() / kManifestName).string();
  return parse_config_text(reader.manifest().config_toml, manifest, {});
}

// config.json's bos and eos (Note [Begin and end of text]): the run's data.tokenizer's, null
// without one. A tokenizer that cannot be read now (moved since the run), or an id the model's
// vocabulary lacks, leaves them null and says so: the weights are still worth exporting.
HfSpecialTokens special_tokens_of(const Config& config) {
  if (config.data.tokenizer.empty()) return {};
  HfSpecialTokens tokens;
  try {
    tokens = hf_special_tokens(data::BpeTokenizer::load(config.data.tokenizer));
  } catch (const Error& e) {
    std::fprintf(stderr,
                 "zerotrain: checkpoint export: the run's data.tokenizer cannot be read (%s); "
                 "config.json's bos_token_id and eos_token_id are null: set them there by hand "
                 "for generation\n",
                 e.what());
    return {};
  }
  for (std::optional<std::int64_t>* id : {&tokens.bos, &tokens.eos}) {
    if (*id && **id >= config.model.vocab_size) {
      std::fprintf(stderr,
                   "zerotrain: checkpoint export: data.tokenizer's special token id %lld is not "
                   "below model.vocab_size = %lld; config.json names none in its place (null)\n",
                   static_cast<long long>(**id), static_cast<long long>(config.model.vocab_size));
      id->reset();
    }
  }
  return tokens;
}

}  // namespace

ExportSummary export_hf_safetensors(const CheckpointReader& reader,
                                    const std::filesystem::path& out, ExportDType dtype,
                                    data::ExistingOutput existing) {
  data::check_output_outside(out, "safetensors export", reader.path(), "checkpoint");
  const Manifest& manifest = reader.manifest();
  const Config config = config_of(reader);
  const ModelConfig& model = config.model;
  const HfNaming naming = hf_naming(model, manifest.parameters);
  const std::filesystem::path config_json = out.parent_path() / kHfConfigName;
  if (out.filename() == kHfConfigName) {
    throw IoError("refusing to write the safetensors export " + data::quoted_path(out) +
                  ": the export writes its config.json beside OUT, which would be the same "
                  "file; name OUT model.safetensors");
  }
  data::check_output_outside(config_json, "Hugging Face config", reader.path(), "checkpoint");
  // A fused parameter's parts are its consecutive rows: written back to back as separate
  // tensors, their bytes are the parameter's, so the writing below needs no split.
  std::vector<SafetensorsEntry> entries;
  for (const HfParameterNames& names : naming.parameters) {
    const std::string prefix = names.in_body ? naming.body_prefix : "";
    if (names.parts.size() > 1) {
      for (std::size_t i = 0; i < names.parts.size(); ++i) {
        std::vector<std::int64_t> shape = names.parameter.shape;
        shape[0] = names.part_rows[i];
        entries.push_back({prefix + names.parts[i], shape});
      }
      continue;
    }
    std::vector<std::int64_t> shape = names.parameter.shape;
    if (names.layout == HfLayout::kTransposed) std::reverse(shape.begin(), shape.end());
    entries.push_back({prefix + names.parts[0], shape});
  }
  // Both outputs are checked, and config.json is ready, before the checkpoint is read: an
  // existing file that may not be replaced stops the export before anything is written, and
  // a failure while the weights are written leaves both earlier files as they were.
  data::AtomicOutputFile config_file(config_json, "Hugging Face config", std::nullopt, existing);
  data::AtomicOutputFile file(out, "safetensors export", std::nullopt, existing);
  // transformers builds the model from the config.json beside the weights.
  const std::string config_text =
      hf_config_text(model, torch_dtype_of(dtype), special_tokens_of(config));
  config_file.write(config_text.data(), config_text.size());
  reader.verify();
  std::uint64_t data_bytes = 0;
  const std::string header =
      safetensors_header_text(entries, dtype,
                              {{"format", "pt"},
                               {"zerotrain.step", std::to_string(manifest.trainer.step)},
                               {"zerotrain.names", naming.family}},
                              data_bytes);
  const std::uint64_t length = header.size();
  file.write(&length, sizeof(length));
  file.write(header.data(), header.size());
  const std::size_t element_bytes = export_element_bytes(dtype);
  std::uint64_t offset = sizeof(length) + header.size();
  ExportSummary summary;
  std::vector<float> piece;
  std::vector<float> column;
  std::vector<std::uint16_t> narrow;
  for (const HfParameterNames& names : naming.parameters) {
    const ManifestParameter& p = names.parameter;
    const std::int64_t rows = p.shape[0];
    const std::int64_t columns = p.numel() / std::max<std::int64_t>(rows, 1);
    const std::int64_t piece_rows =
        std::max<std::int64_t>(1, kPieceElements / std::max<std::int64_t>(columns, 1));
    for (std::int64_t row = 0; row < rows; row += piece_rows) {
      const std::int64_t n = std::min(piece_rows, rows - row);
      piece.resize(static_cast<std::size_t>(n * columns));
      reader.read(0, p.offset + row * columns, n * columns, piece.data());
      if (names.layout == HfLayout::kAsIs) {
        write_values(file, offset + static_cast<std::uint64_t>(row * columns) * element_bytes,
                     piece.data(), n * columns, dtype, narrow, p.name);
        continue;
      }
      // Transposed: our rows [row, row + n) are columns of the (in, out) matrix, a run of n
      // elements in each of its `columns` rows.
      column.resize(static_cast<std::size_t>(n));
      for (std::int64_t c = 0; c < columns; ++c) {
        for (std::int64_t r = 0; r < n; ++r) {
          column[static_cast<std::size_t>(r)] = piece[static_cast<std::size_t>(r * columns + c)];
        }
        write_values(file, offset + static_cast<std::uint64_t>(c * rows + row) * element_bytes,
                     column.data(), n, dtype, narrow, p.name);
      }
    }
    offset += static_cast<std::uint64_t>(p.numel()) * element_bytes;
    summary.tensors += static_cast<std::int64_t>(names.parts.size());
    summary.parameters += p.numel();
  }
  file.commit();
  config_file.commit();
  summary.bytes = sizeof(length) + header.size() + data_bytes;
  return summary;
}

}  // namespace zt::checkpoint
