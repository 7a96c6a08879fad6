// Resolving checkpoint.init_from's path to safetensors files and their tensors.
#include "runtime/checkpoint/hf_weights.h"

#include "core/error.h"
#include "data/json_document.h"
#include "data/safe_file.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  data::InputFile file = data::InputFile::open(path, "safetensors index");
  std::string text(file.size_bytes(), '\0');
  if (!text.empty()) file.read_at(0, text.data(), text.size());
  return text;
}

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

HfWeights::HfWeights(const fs::path& path) {
  std::error_code ec;
  fs::path file = path;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / kHfIndexName, ec)) {
      file = path / kHfIndexName;
    } else if (fs::exists(path / kHfSingleFileName, ec)) {
      file = path / kHfSingleFileName;
    } else {
      throw IoError("directory " + data::quoted_path(path) + " holds neither " +
                    std::string(kHfSingleFileName) + " nor " + std::string(kHfIndexName) +
                    "; pass the safetensors file or the index itself");
    }
  }
  source_ = file;
  if (ends_with(file.filename().string(), ".json")) {
    open_index(file);
    return;
  }
  files_.push_back(std::make_unique<SafetensorsFile>(SafetensorsFile::open(file)));
  for (const SafetensorsTensor& tensor : files_.back()->header().tensors) {
    tensors_[tensor.name] = HfTensorRef{files_.back().get(), &tensor};
  }
}

void HfWeights::open_index(const fs::path& index) {
  const std::string source = data::quoted_path(index);
  const data::JsonValue root = data::parse_json(read_text(index), index.string());
  const data::JsonValue* weight_map = root.find("weight_map");
  if (weight_map == nullptr) {
    throw FormatError("safetensors index " + source +
                      " has no \"weight_map\" (tensor name -> file name)");
  }
  std::map<std::string, const SafetensorsFile*> opened;
  for (const auto& [name, value] : weight_map->as_object("weight_map")) {
    const std::string& file_name = value.as_string("weight_map." + name);
    const fs::path relative(file_name);
    if (file_name.empty() || relative.is_absolute() || relative.has_parent_path()) {
      throw FormatError("safetensors index " + source + ": tensor '" + name + "' names file '" +
                        file_name + "'; expected a file name beside the index");
    }
    auto it = opened.find(file_name);
    if (it == opened.end()) {
      files_.push_back(
          std::make_unique<SafetensorsFile>(SafetensorsFile::open(index.parent_path() / relative)));
      it = opened.emplace(file_name, files_.back().get()).first;
    }
    const SafetensorsTensor* tensor = it->second->find(name);
    if (tensor == nullptr) {
      throw FormatError("safetensors index " + source + " puts tensor '" + name + "' in " +
                        data::quoted_path(it->second->path()) + ", which does not hold it");
    }
    tensors_[name] = HfTensorRef{it->second, tensor};
  }
}

const HfTensorRef* HfWeights::find(std::string_view name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

}  // namespace zt::checkpoint
