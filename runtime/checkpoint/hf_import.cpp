// Matching Hugging Face tensors with the model's parameters and reading a rank's runs.
#include "runtime/checkpoint/hf_import.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <span>

#include "core/error.h"
#include "data/safe_file.h"
#include "runtime/checkpoint/hf_config.h"
#include "runtime/checkpoint/shard_writer.h"

namespace zt::checkpoint {
namespace {

// The most elements one piece of a read holds in memory (4 MiB of fp32), or one row.
constexpr std::int64_t kPieceElements = std::int64_t{1} << 20;

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
  }
  return text + ")";
}

std::string describe(const HfTensorRef& ref) {
  return "'" + ref.tensor->name + "' " + ref.tensor->shape_text() + " in " +
         data::quoted_path(ref.file->path());
}

// Throws Error naming `ref`'s tensor and the element (its index in the file's row-major
// order) of the first non-finite value in `values`, the file's elements from `first` on.
void check_finite(const HfTensorRef& ref, std::int64_t first, std::span<const float> values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isfinite(values[i])) continue;
    const std::int64_t element = first + static_cast<std::int64_t>(i);
    throw Error("tensor " + describe(ref) + " holds " +
                (std::isnan(values[i]) ? "NaN" : "an infinity") + " at element " +
                std::to_string(element) +
                "; weights with non-finite values cannot be trained from");
  }
}

std::string ours(const HfParameterNames& names) {
  return "this model's " + names.parameter.name + " " + names.parameter.shape_text();
}

// Note [Which names init_from reads]: a `checkpoint export` under our own names and one under
// Hugging Face's (--names hf) both load. No Hugging Face name is one of ours ("wte.weight" is
// "embedding.wte" here, "model.layers.0..." is "block.0..."), so the files' tensors tell the
// naming apart: any tensor named as one of this model's untied parameters means our names,
// and every other tensor is then matched (or refused) under them; otherwise the family's
// Hugging Face names. Telling by a marker instead (the export's __metadata__) would refuse
// our names in a file rewritten by another tool, which keeps tensors but not metadata.
HfNaming naming_of(const ModelConfig& model, std::span<const ManifestParameter> parameters,
                   const HfWeights& weights) {
  for (const ManifestParameter& parameter : parameters) {
    if (parameter.tied_to.empty() && weights.find(parameter.name) != nullptr) {
      return zerotrain_naming(parameters);
    }
  }
  return hf_naming(model, parameters);
}

}  // namespace

HfImport::HfImport(const HfWeights& weights, HfNaming naming)
    : weights_(weights), naming_(std::move(naming)) {
  if (!naming_.body_prefix.empty()) {
    for (const auto& [name, ref] : weights_.tensors()) {
      if (name.starts_with(naming_.body_prefix)) file_uses_body_prefix_ = true;
    }
  }
  // Our names for the files' tensors: the body prefix dropped where present.
  std::vector<std::string> used;
  for (const HfParameterNames& names : naming_.parameters) {
    sources_.push_back(match(names, used));
  }
  std::sort(used.begin(), used.end());
  for (const auto& [name, ref] : weights_.tensors()) {
    const std::string_view bare = without_body_prefix(naming_, name);
    if (std::binary_search(used.begin(), used.end(), name) || naming_.skipped(bare)) continue;
    std::string hint = "no parameter of this " + naming_.family + " model takes it";
    if (naming_.family == kZerotrainNames) {
      hint =
          "no parameter of this model has that name (were the weights exported from a "
          "model of another model.* shape or model.tie_embeddings?)";
    } else if (bare == "lm_head.weight") {
      hint =
          "this model ties its head to the token embedding; set model.tie_embeddings = false "
          "to load a separate head (a copy of a tied head is skipped when a config.json beside "
          "the weights says tie_word_embeddings = true)";
    } else if (bare.substr(0, 2) == "h." || bare.substr(0, 7) == "layers.") {
      hint += " (does model.n_layer match the file's layers?)";
    }
    throw Error("Hugging Face weights " + data::quoted_path(weights_.source()) + ": extra tensor " +
                describe(ref) + ": " + hint);
  }
  std::sort(sources_.begin(), sources_.end(), [](const Source& a, const Source& b) {
    return a.names.parameter.offset < b.names.parameter.offset;
  });
}

HfImport::Source HfImport::match(const HfParameterNames& names,
                                 std::vector<std::string>& used) const {
  const std::vector<std::int64_t>& shape = names.parameter.shape;
  ZT_CHECK(!shape.empty(), "a scalar parameter has no Hugging Face layout");
  Source source{names, shape[0], names.parameter.numel() / std::max<std::int64_t>(shape[0], 1), {}};
  const std::string where = "Hugging Face weights " + data::quoted_path(weights_.source());
  std::int64_t row = 0;
  for (std::size_t i = 0; i < names.parts.size(); ++i) {
    const std::string& part = names.parts[i];
    const HfTensorRef* ref = weights_.find(names.in_body ? naming_.body_prefix + part : part);
    if (ref == nullptr) ref = weights_.find(part);
    if (ref == nullptr) {
      std::string hint;
      if (part.ends_with("lm_head.weight")) {
        hint = "; the file ties its head to the token embedding: set model.tie_embeddings = true";
      }
      const bool prefixed = names.in_body && file_uses_body_prefix_;
      throw Error(where + ": no tensor '" + (prefixed ? naming_.body_prefix : "") + part +
                  "' for " + ours(names) + hint);
    }
    if (!converts_to_f32(ref->tensor->dtype)) {
      throw Error(where + ": tensor " + describe(*ref) + " is " +
                  std::string(safetensors_dtype_name(ref->tensor->dtype)) + "; " + ours(names) +
                  " needs F32, BF16 or F16 values");
    }
    const std::vector<std::int64_t>& hf = ref->tensor->shape;
    // The shape the part would have if it fitted exactly; its rows may differ (below).
    std::vector<std::int64_t> expected = shape;
    const bool stacked = !names.part_rows.empty();
    if (stacked) expected[0] = names.part_rows[i];
    std::int64_t rows = -1;
    if (names.layout == HfLayout::kTransposed) {
      ZT_CHECK(shape.size() == 2 && !stacked, "only a whole matrix is stored transposed");
      expected = {shape[1], shape[0]};
      if (hf.size() == 2 && hf[0] == shape[1]) rows = hf[1];
    } else if (hf.size() == shape.size() &&
               std::equal(hf.begin() + 1, hf.end(), shape.begin() + 1)) {
      rows = hf[0];
    }
    const std::int64_t wanted = stacked ? names.part_rows[i] : shape[0];
    const bool fits = rows >= 0 && (rows == wanted ||
                                    (names.row_fit == HfRowFit::kPadWithZeros && rows < wanted) ||
                                    (names.row_fit == HfRowFit::kFirstRows && rows > wanted));
    if (!fits) {
      std::string expect = shape_text(expected);
      if (stacked) {
        expect += ", rows " + std::to_string(row) + ".." + std::to_string(row + wanted - 1) +
                  " of ours (" + std::to_string(i + 1) + " of " +
                  std::to_string(names.parts.size()) + " parts stacked by rows)";
      }
      if (names.layout == HfLayout::kTransposed)
        expect += ", a Conv1D (in, out) weight transposed to ours";
      if (names.row_fit == HfRowFit::kPadWithZeros) expect += ", or fewer rows (padded with zeros)";
      if (names.row_fit == HfRowFit::kFirstRows) expect += ", or more rows (the first are used)";
      throw Error(where + ": tensor " + describe(*ref) + " does not fit " + ours(names) +
                  ": expected " + expect);
    }
    const std::int64_t taken = std::min(rows, wanted);
    source.parts.push_back(Part{*ref, row, taken});
    used.push_back(ref->tensor->name);
    row += taken;
  }
  return source;
}

void HfImport::read_rows(const Source& source, std::int64_t first_row, std::int64_t rows,
                         float* out) const {
  const std::int64_t columns = source.columns;
  std::fill_n(out, rows * columns, 0.0f);  // rows past the parts: padding
  std::vector<float> column;
  for (const Part& part : source.parts) {
    const std::int64_t from = std::max(first_row, part.first_row);
    const std::int64_t to = std::min(first_row + rows, part.first_row + part.rows);
    if (from >= to) continue;
    float* dst = out + (from - first_row) * columns;
    if (source.names.layout == HfLayout::kAsIs) {
      const std::int64_t first = (from - part.first_row) * columns;
      part.ref.file->read_f32(*part.ref.tensor, first, (to - from) * columns, dst);
      check_finite(part.ref, first,
                   std::span(dst, static_cast<std::size_t>((to - from) * columns)));
      continue;
    }
    // Transposed: our rows [from, to) are the columns of the file's (in, out) matrix; its
    // row c holds them side by side.
    const std::int64_t hf_columns = part.ref.tensor->shape[1];
    column.resize(static_cast<std::size_t>(to - from));
    for (std::int64_t c = 0; c < columns; ++c) {
      part.ref.file->read_f32(*part.ref.tensor, c * hf_columns + (from - part.first_row), to - from,
                              column.data());
      check_finite(part.ref, c * hf_columns + (from - part.first_row), column);
      for (std::int64_t r = 0; r < to - from; ++r) {
        dst[r * columns + c] = column[static_cast<std::size_t>(r)];
      }
    }
  }
}

void HfImport::read(std::int64_t begin, std::int64_t count, float* out) const {
  const std::int64_t end = begin + count;
  std::vector<float> piece;
  for (const Source& source : sources_) {
    const std::int64_t p_begin = source.names.parameter.offset;
    const std::int64_t p_end = p_begin + source.names.parameter.numel();
    const std::int64_t from = std::max(begin, p_begin);
    const std::int64_t to = std::min(end, p_end);
    if (from >= to) continue;
    // Whole rows a bounded piece at a time, the part of each inside [from, to) kept.
    const std::int64_t columns = source.columns;
    const std::int64_t piece_rows =
        std::max<std::int64_t>(1, kPieceElements / std::max<std::int64_t>(columns, 1));
    for (std::int64_t row = (from - p_begin) / columns; row * columns < to - p_begin;
         row += piece_rows) {
      const std::int64_t rows = std::min(piece_rows, source.rows - row);
      piece.resize(static_cast<std::size_t>(rows * columns));
      read_rows(source, row, rows, piece.data());
      const std::int64_t piece_begin = p_begin + row * columns;
      const std::int64_t keep_from = std::max(from, piece_begin);
      const std::int64_t keep_to = std::min(to, piece_begin + rows * columns);
      std::copy(piece.begin() + (keep_from - piece_begin), piece.begin() + (keep_to - piece_begin),
                out + (keep_from - begin));
    }
  }
}

void HfImport::read_shard(const zero::StateShard& shard, float* out) const {
  std::fill_n(out, shard.numel, 0.0f);
  for (const zero::StateRun& run : shard.runs) read(run.begin, run.count, out + run.shard_offset);
}

void init_from_hugging_face(const Config& config, zero::ZeroStrategy& strategy,
                            int optimizer_states, int rank, const AgreeMax& agree_max) {
  const auto started = std::chrono::steady_clock::now();
  const std::string& path = config.checkpoint.init_from;
  const zero::StateShard shard = strategy.load_shard();
  std::vector<HostFloats> tensors;
  std::string names;  // which names the weights use, for the log
  std::exception_ptr error;
  try {
    try {
      const HfWeights weights(path);
      const std::vector<ManifestParameter> parameters = describe_parameters(strategy.layout());
      HfNaming naming = naming_of(config.model, parameters, weights);
      names = naming.family == kZerotrainNames ? "zerotrain" : "Hugging Face " + naming.family;
      if (const auto config_json = hf_config_beside(weights.source())) {
        check_hf_config(config, *config_json);
        // The file declares the tie too: a copy of the head is the embedding's (transformers
        // ties it on load), not a separate head.
        if (config.model.tie_embeddings) naming.skipped_patterns.emplace_back("lm_head.weight");
      } else if (rank == 0) {
        std::fprintf(stderr,
                     "zerotrain: checkpoint.init_from: no %s beside %s; the tensors' shapes are "
                     "checked, but not what they cannot show (rope_theta, norm_eps, rotary "
                     "scaling)\n",
                     std::string(kHfConfigName).c_str(),
                     data::quoted_path(weights.source()).c_str());
      }
      const HfImport import(weights, std::move(naming));
      for (int t = 0; t < 1 + optimizer_states; ++t) {
        tensors.push_back(HostFloats::uninitialized(static_cast<std::size_t>(shard.numel)));
      }
      import.read_shard(shard, tensors[0].data.get());
      // A fresh optimizer: its states start at zero, as they would without init_from.
      for (std::size_t t = 1; t < tensors.size(); ++t) {
        std::fill_n(tensors[t].data.get(), shard.numel, 0.0f);
      }
    } catch (const ConfigError& e) {
      throw ConfigError(where_set(config, "checkpoint.init_from") + ": " + e.what());
    } catch (const Error& e) {
      throw Error(where_set(config, "checkpoint.init_from") + ": checkpoint.init_from = \"" + path +
                  "\": " + e.what());
    }
  } catch (...) {
    error = std::current_exception();
  }
  if (agree_max({0, error ? 1.0f : 0.0f})[1] > 0) {
    if (error) std::rethrow_exception(error);
    throw Error("checkpoint.init_from: another rank could not read \"" + path +
                "\" (its error is above)");
  }
  std::vector<const float*> in;
  for (const HostFloats& tensor : tensors) in.push_back(tensor.data.get());
  strategy.import_states(in);
  if (rank == 0) {
    std::fprintf(stderr,
                 "zerotrain: initialized from weights \"%s\" (%s names, %lld elements; each "
                 "rank read its own part) in %.3f s\n",
                 path.c_str(), names.c_str(), static_cast<long long>(strategy.layout().numel),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
}

}  // namespace zt::checkpoint
