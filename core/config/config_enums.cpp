// config_name() for the config enums, read from the name tables in config_enums.h.
#include "core/config/config_enums.h"

#include "core/error.h"

namespace zt {
namespace {

template <typename E, std::size_t N>
std::string_view name_of(const std::array<EnumName<E>, N>& names, E value) {
  for (const EnumName<E>& entry : names) {
    if (entry.value == value) return entry.name;
  }
  ZT_CHECK(false, "enum value " + std::to_string(static_cast<int>(value)) + " has no name");
  return {};
}

}  // namespace

std::string_view config_name(ModelType type) { return name_of(kModelTypeNames, type); }
std::string_view config_name(DataFormat format) { return name_of(kDataFormatNames, format); }
std::string_view config_name(OptimizerType type) { return name_of(kOptimizerTypeNames, type); }
std::string_view config_name(SchedulerType type) { return name_of(kSchedulerTypeNames, type); }
std::string_view config_name(PrecisionDType dtype) { return name_of(kPrecisionDTypeNames, dtype); }
std::string_view config_name(GradDType dtype) { return name_of(kGradDTypeNames, dtype); }
std::string_view config_name(DeviceKind device) { return name_of(kDeviceKindNames, device); }
std::string_view config_name(OffloadTarget target) {
  return name_of(kOptimizerOffloadNames, target);
}

std::string_view config_name(QuantizedFormat format) {
  return name_of(kQuantizedFormatNames, format);
}

std::string_view config_name(CommBackendKind backend) {
  return name_of(kCommBackendNames, backend);
}

std::string_view config_name(CollectiveCheckKind check) {
  return name_of(kCollectiveCheckNames, check);
}

std::string_view config_name(AttentionKind attention) {
  return name_of(kAttentionNames, attention);
}

}  // namespace zt
