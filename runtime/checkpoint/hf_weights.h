// HfWeights: a Hugging Face model's weights as checkpoint.init_from names them: one
// safetensors file, a sharded set (model.safetensors.index.json, whose "weight_map" names
// each tensor's file), or a directory holding either. Opening reads only the headers; a
// tensor's values are read a range at a time from the file that holds it.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/checkpoint/safetensors_file.h"

namespace zt::checkpoint {

inline constexpr std::string_view kHfSingleFileName = "model.safetensors";
inline constexpr std::string_view kHfIndexName = "model.safetensors.index.json";

struct HfTensorRef {
  const SafetensorsFile* file = nullptr;
  const SafetensorsTensor* tensor = nullptr;
};

class HfWeights {
 public:
  // Throws IoError / FormatError naming the path (and, in an index, the tensor and file).
  explicit HfWeights(const std::filesystem::path& path);

  // What was opened: the file or the index.
  const std::filesystem::path& source() const { return source_; }
  // Every tensor, by name (an index's weight_map entries; a single file's tensors).
  const std::map<std::string, HfTensorRef, std::less<>>& tensors() const { return tensors_; }
  const HfTensorRef* find(std::string_view name) const;

 private:
  void open_index(const std::filesystem::path& index);

  std::filesystem::path source_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, HfTensorRef, std::less<>> tensors_;
};

}  // namespace zt::checkpoint
