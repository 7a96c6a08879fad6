// The names the config file uses for each enum of config.h ("adamw", "bf16", "cuda"), in
// one table per enum that the schema, the docs and config_name() all read.
#pragma once

#include <array>
#include <string_view>

#include "core/config/config.h"

namespace zt {

template <typename E>
struct EnumName {
  std::string_view name;
  E value;
};

inline constexpr std::array<EnumName<ModelType>, 3> kModelTypeNames{
    {{"mlp", ModelType::kMlp}, {"gpt", ModelType::kGpt}, {"llama", ModelType::kLlama}}};
inline constexpr std::array<EnumName<DataFormat>, 4> kDataFormatNames{
    {{"auto", DataFormat::kAuto},
     {"zerotrain", DataFormat::kZerotrain},
     {"llmc", DataFormat::kLlmc},
     {"nanogpt", DataFormat::kNanogpt}}};
inline constexpr std::array<EnumName<SchedulerType>, 4> kSchedulerTypeNames{
    {{"constant", SchedulerType::kConstant},
     {"warmup", SchedulerType::kWarmup},
     {"warmup_cosine", SchedulerType::kWarmupCosine},
     {"warmup_linear", SchedulerType::kWarmupLinear}}};
inline constexpr std::array<EnumName<OptimizerType>, 3> kOptimizerTypeNames{
    {{"sgd", OptimizerType::kSgd},
     {"adam", OptimizerType::kAdam},
     {"adamw", OptimizerType::kAdamW}}};
inline constexpr std::array<EnumName<PrecisionDType>, 3> kPrecisionDTypeNames{
    {{"fp32", PrecisionDType::kFp32},
     {"bf16", PrecisionDType::kBf16},
     {"fp16", PrecisionDType::kFp16}}};
inline constexpr std::array<EnumName<GradDType>, 3> kGradDTypeNames{
    {{"auto", GradDType::kAuto}, {"compute", GradDType::kCompute}, {"fp32", GradDType::kFp32}}};
inline constexpr std::array<EnumName<DeviceKind>, 2> kDeviceKindNames{
    {{"cpu", DeviceKind::kCpu}, {"cuda", DeviceKind::kCuda}}};
inline constexpr std::array<EnumName<CommBackendKind>, 3> kCommBackendNames{
    {{"auto", CommBackendKind::kAuto},
     {"gloo", CommBackendKind::kGloo},
     {"nccl", CommBackendKind::kNccl}}};
inline constexpr std::array<EnumName<CollectiveCheckKind>, 3> kCollectiveCheckNames{
    {{"off", CollectiveCheckKind::kOff},
     {"step", CollectiveCheckKind::kStep},
     {"every", CollectiveCheckKind::kEvery}}};
inline constexpr std::array<EnumName<AttentionKind>, 3> kAttentionNames{
    {{"auto", AttentionKind::kAuto},
     {"rows", AttentionKind::kRows},
     {"cudnn", AttentionKind::kCudnn}}};

inline constexpr std::array<EnumName<QuantizedFormat>, 2> kQuantizedFormatNames{
    {{"int4", QuantizedFormat::kInt4}, {"int8", QuantizedFormat::kInt8}}};

inline constexpr std::array<EnumName<OffloadTarget>, 3> kOptimizerOffloadNames{
    {{"none", OffloadTarget::kNone}, {"cpu", OffloadTarget::kCpu}, {"nvme", OffloadTarget::kNvme}}};
inline constexpr std::array<EnumName<OffloadTarget>, 2> kParameterOffloadNames{
    {{"none", OffloadTarget::kNone}, {"cpu", OffloadTarget::kCpu}}};

// The config-file name of a value, for logs and messages ("adamw").
std::string_view config_name(ModelType type);
std::string_view config_name(DataFormat format);
std::string_view config_name(OptimizerType type);
std::string_view config_name(SchedulerType type);
std::string_view config_name(PrecisionDType dtype);
std::string_view config_name(GradDType dtype);
std::string_view config_name(DeviceKind device);
std::string_view config_name(CommBackendKind backend);
std::string_view config_name(AttentionKind attention);
std::string_view config_name(CollectiveCheckKind check);
std::string_view config_name(OffloadTarget target);
std::string_view config_name(QuantizedFormat format);

}  // namespace zt
