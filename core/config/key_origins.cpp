// Where each given key got its value, for messages about checks made after loading.
#include "core/config/config.h"

namespace zt {

void KeyOrigins::set(std::string key, std::string where) {
  for (auto& [name, place] : entries_) {
    if (name == key) {
      place = std::move(where);  // a later --set overrides the file
      return;
    }
  }
  entries_.emplace_back(std::move(key), std::move(where));
}

const std::string* KeyOrigins::find(std::string_view key) const {
  for (const auto& [name, place] : entries_) {
    if (name == key) return &place;
  }
  return nullptr;
}

std::string where_set(const Config& config, std::string_view key) {
  if (const std::string* place = config.origins.find(key)) return *place;
  return config.source;
}

}  // namespace zt
