// Names, sizes and the manifest's TOML.
#include "runtime/checkpoint/checkpoint_format.h"

#include <toml++/toml.h>

#include <cstdio>
#include <sstream>

#include "core/error.h"
#include "runtime/checkpoint/run_id.h"

namespace zt::checkpoint {
namespace {

std::string padded_number(std::int64_t value, int width) {
  std::string digits = std::to_string(value);
  if (static_cast<int>(digits.size()) < width) {
    digits.insert(0, static_cast<std::size_t>(width) - digits.size(), '0');
  }
  return digits;
}

std::string hex32(std::uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof(text), "%08x", value);
  return text;
}

// Reads one manifest key, naming the file and the key when it is absent or mistyped.
class ManifestReader {
 public:
  ManifestReader(const toml::table& table, const std::string& path, std::string prefix = "")
      : table_(table), path_(path), prefix_(std::move(prefix)) {}

  template <typename T>
  T get(std::string_view key) const {
    const toml::node* node = table_.get(key);
    if (node == nullptr) fail(key, "is missing");
    if constexpr (std::is_same_v<T, std::string>) {
      if (auto value = node->value<std::string>()) return *value;
    } else if constexpr (std::is_same_v<T, double>) {
      if (auto value = node->value<double>()) return *value;
    } else {
      if (auto value = node->value<std::int64_t>()) return static_cast<T>(*value);
    }
    fail(key, "has the wrong type");
  }
  // An array whose every element is a T (std::int64_t or std::string).
  template <typename T>
  std::vector<T> array_of(std::string_view key) const {
    const toml::array* array = table_.get_as<toml::array>(key);
    if (array == nullptr) fail(key, "is missing or not an array");
    std::vector<T> values;
    for (const toml::node& node : *array) {
      auto value = node.value<T>();
      if (!value) fail(key, "holds a value of another type");
      values.push_back(*value);
    }
    return values;
  }
  const toml::array& tables(std::string_view key) const {
    const toml::array* array = table_.get_as<toml::array>(key);
    if (array == nullptr || (!array->empty() && !array->is_array_of_tables())) {
      fail(key, "is missing or not tables");
    }
    return *array;
  }
  [[noreturn]] void fail(std::string_view key, std::string_view problem) const {
    throw Error("checkpoint manifest '" + path_ + "': key '" + prefix_ + std::string(key) + "' " +
                std::string(problem) + "; the file is damaged or not a zerotrain checkpoint");
  }

 private:
  const toml::table& table_;
  const std::string& path_;
  std::string prefix_;
};

}  // namespace

std::string rank_file_name(int rank, int world_size) {
  return "rank-" + padded_number(rank, 5) + "-of-" + padded_number(world_size, 5) + ".zts";
}

std::string step_directory_name(std::int64_t step) {
  return std::string(kStepPrefix) + padded_number(step, 8);
}

std::uint64_t tensor_data_offset(std::int64_t run_count, std::int64_t shard_numel, int tensor) {
  return sizeof(RankFileHeader) + static_cast<std::uint64_t>(run_count) * 3 * 8 +
         static_cast<std::uint64_t>(tensor) * static_cast<std::uint64_t>(shard_numel) * 4;
}

std::uint64_t rank_file_bytes(std::int64_t run_count, std::int64_t shard_numel, int tensors) {
  return tensor_data_offset(run_count, shard_numel, tensors);
}

std::int64_t ManifestParameter::numel() const {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;
  return n;
}

std::string ManifestParameter::shape_text() const {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
  }
  return text + ")";
}

std::vector<ManifestParameter> describe_parameters(const zero::FlatLayout& layout) {
  std::vector<ManifestParameter> parameters;
  for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
    const zero::BlockSlots& block = layout.blocks[b];
    for (const zero::ParameterSlot& slot : block.parameters) {
      ManifestParameter parameter;
      parameter.name = block.name + "." + slot.spec.name;
      for (int axis = 0; axis < slot.spec.shape.rank(); ++axis) {
        parameter.shape.push_back(slot.spec.shape[axis]);
      }
      const std::size_t owner = slot.tied_to_block.value_or(b);
      // The unpadded order: what the checkpoint's runs hold, whatever the layout's alignment.
      parameter.offset = slot.unpadded_offset;
      if (slot.tied_to_block) {
        for (const zero::ParameterSlot& source : layout.blocks[owner].parameters) {
          if (source.offset == slot.offset && !source.tied_to_block) {
            parameter.tied_to = layout.blocks[owner].name + "." + source.spec.name;
          }
        }
      }
      parameters.push_back(std::move(parameter));
    }
  }
  return parameters;
}

std::vector<std::string> state_names(std::string_view optimizer_type, int states) {
  std::vector<std::string> names{"master"};
  if (optimizer_type == "adam" || optimizer_type == "adamw") {
    names.insert(names.end(), {"exp_avg", "exp_avg_sq"});
  } else if (optimizer_type == "sgd") {
    names.emplace_back("momentum_buffer");
  }
  // An optimizer with other states: numbered; with fewer (SGD without momentum): cut.
  while (std::ssize(names) < 1 + states)
    names.push_back("state" + std::to_string(names.size() - 1));
  names.resize(static_cast<std::size_t>(1 + states));
  return names;
}

std::string manifest_to_toml(const Manifest& m) {
  toml::table root;
  root.insert("format", std::string(kFormat));
  root.insert("step", m.trainer.step);
  root.insert("applied_steps", m.trainer.applied_steps);
  if (m.trainer.loss_scale) {
    root.insert("loss_scale", *m.trainer.loss_scale);
    root.insert("loss_scale_clean_steps", m.trainer.loss_scale_clean_steps);
  }
  root.insert("world_size", m.world_size);
  root.insert("zero_stage", m.zero_stage);
  root.insert("precision", m.precision);
  root.insert("optimizer", m.optimizer);
  root.insert("offload_optimizer", m.offload);
  toml::array names;
  for (const std::string& name : m.state_names) names.push_back(name);
  root.insert("state_tensors", names);
  // Every state tensor is little-endian fp32, whatever precision.dtype computes in.
  root.insert("state_dtype", "fp32");
  root.insert("numel", m.numel);
  root.insert("global_batch_size", m.global_batch_size);
  // The data position: batch s holds samples [(s - 1) x global batch, s x global batch) at
  // every world size, so the sampler resumes from the step; initialization and the synthetic
  // data are counter-based streams of the seed, so no generator state needs saving.
  root.insert("samples_seen", m.trainer.step * m.global_batch_size);
  root.insert("seed", m.seed);
  if (!m.run_id.empty()) root.insert("run_id", m.run_id);
  toml::array parameters;
  for (const ManifestParameter& p : m.parameters) {
    toml::array shape;
    for (const std::int64_t d : p.shape) shape.push_back(d);
    toml::table entry{{"name", p.name}, {"shape", shape}, {"offset", p.offset}};
    if (!p.tied_to.empty()) entry.insert("tied_to", p.tied_to);
    parameters.push_back(std::move(entry));
  }
  root.insert("parameters", parameters);
  toml::array files;
  for (const ManifestFile& f : m.files) {
    files.push_back(toml::table{{"name", f.name},
                                {"rank", f.rank},
                                {"bytes", static_cast<std::int64_t>(f.bytes)},
                                {"crc32c", hex32(f.crc32c)}});
  }
  root.insert("files", files);
  root.insert("config", m.config_toml);
  std::ostringstream out;
  out << "# A zerotrain checkpoint: `zerotrain checkpoint inspect` this directory.\n"
      << root << "\n";
  return out.str();
}

Manifest parse_manifest(std::string_view text, const std::string& path) {
  toml::table root;
  try {
    root = toml::parse(text, std::string_view{path});
  } catch (const toml::parse_error& error) {
    throw Error("checkpoint manifest '" + path + "' is not valid TOML (" +
                std::string(error.description()) + "); the file is damaged");
  }
  const ManifestReader read(root, path);
  if (read.get<std::string>("format") != kFormat) {
    read.fail("format", "is '" + read.get<std::string>("format") + "', not '" +
                            std::string(kFormat) + "' (written by another version?)");
  }
  Manifest m;
  m.trainer.step = read.get<std::int64_t>("step");
  m.trainer.applied_steps = read.get<std::int64_t>("applied_steps");
  if (root.contains("loss_scale")) {
    m.trainer.loss_scale = read.get<double>("loss_scale");
    m.trainer.loss_scale_clean_steps = read.get<std::int64_t>("loss_scale_clean_steps");
  }
  m.world_size = read.get<int>("world_size");
  m.zero_stage = read.get<int>("zero_stage");
  m.precision = read.get<std::string>("precision");
  m.optimizer = read.get<std::string>("optimizer");
  m.offload = read.get<std::string>("offload_optimizer");
  m.state_names = read.array_of<std::string>("state_tensors");
  if (read.get<std::string>("state_dtype") != "fp32") read.fail("state_dtype", "is not \"fp32\"");
  m.numel = read.get<std::int64_t>("numel");
  m.global_batch_size = read.get<std::int64_t>("global_batch_size");
  m.seed = read.get<std::int64_t>("seed");
  if (root.contains("run_id")) {
    m.run_id = read.get<std::string>("run_id");
    if (!run_id_value(m.run_id)) read.fail("run_id", "is not a run id (12 hex digits)");
  }
  m.config_toml = read.get<std::string>("config");
  if (m.world_size < 1 || m.state_names.empty() || m.numel < 0 || m.trainer.step < 0) {
    read.fail("world_size", "or a count beside it is out of range");
  }
  std::size_t index = 0;
  for (const toml::node& node : read.tables("parameters")) {
    const ManifestReader entry(*node.as_table(), path,
                               "parameters[" + std::to_string(index++) + "].");
    ManifestParameter p;
    p.name = entry.get<std::string>("name");
    p.shape = entry.array_of<std::int64_t>("shape");
    p.offset = entry.get<std::int64_t>("offset");
    if (node.as_table()->contains("tied_to")) p.tied_to = entry.get<std::string>("tied_to");
    m.parameters.push_back(std::move(p));
  }
  index = 0;
  for (const toml::node& node : read.tables("files")) {
    const ManifestReader entry(*node.as_table(), path, "files[" + std::to_string(index) + "].");
    ManifestFile f;
    f.name = entry.get<std::string>("name");
    f.rank = entry.get<int>("rank");
    f.bytes = static_cast<std::uint64_t>(entry.get<std::int64_t>("bytes"));
    const std::string crc = entry.get<std::string>("crc32c");
    char* end = nullptr;
    f.crc32c = static_cast<std::uint32_t>(std::strtoul(crc.c_str(), &end, 16));
    if (crc.empty() || end == nullptr || *end != '\0') entry.fail("crc32c", "is not hexadecimal");
    // A file name is a plain name inside the checkpoint, never a path elsewhere.
    if (f.name != rank_file_name(f.rank, m.world_size) || f.rank != static_cast<int>(index)) {
      entry.fail("name", "is '" + f.name + "', not " +
                             rank_file_name(static_cast<int>(index), m.world_size));
    }
    m.files.push_back(std::move(f));
    ++index;
  }
  if (static_cast<int>(m.files.size()) != m.world_size) {
    read.fail("files", "lists " + std::to_string(m.files.size()) + " files for world_size " +
                           std::to_string(m.world_size));
  }
  return m;
}

std::string manifest_run_id(std::string_view text) {
  try {
    const toml::table root = toml::parse(text);
    return root["run_id"].value_or(std::string());
  } catch (const toml::parse_error&) {
    return "";
  }
}

}  // namespace zt::checkpoint
