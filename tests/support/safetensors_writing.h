// Writing small F32 safetensors files in tests (a fixture's tensors, edited), and reading a
// file's floating tensors back, to build the files the Hugging Face loader must refuse.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "runtime/checkpoint/hf_weights.h"

namespace zt::testing {

struct Tensor32 {
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};
using TensorMap = std::map<std::string, Tensor32>;

// Every floating tensor of `weights` as F32, by name, `prefix` dropped where present.
inline TensorMap read_tensors(const checkpoint::HfWeights& weights, const std::string& prefix) {
  TensorMap tensors;
  for (const auto& [name, ref] : weights.tensors()) {
    if (!checkpoint::converts_to_f32(ref.tensor->dtype)) continue;  // GPT-2's bool mask buffers
    Tensor32 t{ref.tensor->shape,
               std::vector<float>(static_cast<std::size_t>(ref.tensor->numel()))};
    ref.file->read_f32(*ref.tensor, 0, ref.tensor->numel(), t.values.data());
    tensors[name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name] = std::move(t);
  }
  return tensors;
}

inline void write_safetensors(const std::filesystem::path& path, const TensorMap& tensors) {
  std::string header = "{";
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    std::string shape;
    for (const std::int64_t d : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    const std::uint64_t bytes = t.values.size() * 4;
    header += (header.size() > 1 ? "," : "") +
              ("\"" + name + "\":{\"dtype\":\"F32\",\"shape\":[" + shape + "],\"data_offsets\":[" +
               std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}");
    offset += bytes;
  }
  header += "}";
  std::ofstream out(path, std::ios::binary);
  const std::uint64_t length = header.size();
  out.write(reinterpret_cast<const char*>(&length), 8);
  out << header;
  for (const auto& [name, t] : tensors) {
    out.write(reinterpret_cast<const char*>(t.values.data()),
              static_cast<std::streamsize>(t.values.size() * 4));
  }
}

}  // namespace zt::testing
