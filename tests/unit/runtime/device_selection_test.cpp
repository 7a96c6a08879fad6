// The rank's device from runtime.device / runtime.device_index / LOCAL_RANK, the collectives
// backend comm.backend resolves to and the attention kernels runtime.attention resolves to,
// with the errors for combinations that cannot work.
#include "runtime/engine/device_selection.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "core/config/config_loader.h"
#include "core/device/device_context.h"
#include "core/error.h"
#include "nn/kernels/kernel_backend.h"
#include "tests/support/error_message.h"

namespace zt::engine {
namespace {

Config config_with(std::vector<std::string> overrides) {
  return parse_config_text("", "test.toml", overrides);
}

TEST(DeviceSelection, CpuRanksNameTheirLocalSlice) {
  EXPECT_EQ(rank_device(config_with({}), 3), Device::cpu(3));
}

TEST(DeviceSelection, CudaTakesLocalRankUnlessAnIndexIsGiven) {
  EXPECT_EQ(rank_device(config_with({"runtime.device=cuda"}), 2), Device::cuda(2));
  EXPECT_EQ(rank_device(config_with({"runtime.device=cuda", "runtime.device_index=1"}), 2),
            Device::cuda(1));
}

TEST(DeviceSelection, Fp16OnCudaIsRefusedNamingTheKeyAndWhatWorks) {
  try {
    rank_device(config_with({"runtime.device=cuda", "precision.dtype=fp16"}), 0);
    FAIL() << "accepted fp16 on CUDA";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("precision.dtype"), std::string::npos) << message;
    EXPECT_NE(message.find("bf16"), std::string::npos) << message;
    EXPECT_NE(message.find("fp32"), std::string::npos) << message;
  }
  EXPECT_EQ(rank_device(config_with({"runtime.device=cuda", "precision.dtype=bf16"}), 0),
            Device::cuda(0));
  EXPECT_EQ(rank_device(config_with({"precision.dtype=fp16"}), 1), Device::cpu(1));
}

TEST(DeviceSelection, DeviceIndexBelowMinusOneIsRefusedNamingTheKey) {
  try {
    config_with({"runtime.device_index=-2"});
    FAIL() << "accepted runtime.device_index=-2";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("runtime.device_index"), std::string::npos) << e.what();
  }
}

TEST(DeviceSelection, AutoIsGlooOnTheCpu) {
  EXPECT_EQ(resolved_comm_backend(config_with({})), CommBackendKind::kGloo);
  EXPECT_EQ(resolved_comm_backend(config_with({"comm.backend=gloo"})), CommBackendKind::kGloo);
}

TEST(DeviceSelection, AutoIsNcclOnCudaWhereBuilt) {
  const CommBackendKind expected =
      comm::nccl_backend_built() ? CommBackendKind::kNccl : CommBackendKind::kGloo;
  EXPECT_EQ(resolved_comm_backend(config_with({"runtime.device=cuda"})), expected);
  EXPECT_EQ(resolved_comm_backend(config_with({"runtime.device=cuda", "comm.backend=gloo"})),
            CommBackendKind::kGloo);
}

TEST(DeviceSelection, NcclOnTheCpuIsRefusedNamingBothKeys) {
  try {
    resolved_comm_backend(config_with({"comm.backend=nccl"}));
    FAIL() << "accepted nccl on the CPU";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("comm.backend"), std::string::npos) << message;
    EXPECT_NE(message.find("runtime.device"), std::string::npos) << message;
  }
}

TEST(DeviceSelection, NcclWithoutNcclInTheBuildIsRefused) {
  if (comm::nccl_backend_built()) GTEST_SKIP() << "this build has NCCL";
  EXPECT_THROW(resolved_comm_backend(config_with({"runtime.device=cuda", "comm.backend=nccl"})),
               ConfigError);
}

// In CI (nvcc, no GPU) and on CPU-only builds, asking for a GPU is a ConfigError that names
// runtime.device and says what is missing, before anything is allocated.
TEST(DeviceSelection, CudaWithoutAGpuOrBackendIsAClearError) {
  try {
    const auto device = make_device_context(Device::cuda(0));
    if (cuda_backend_built()) GTEST_SKIP() << "a GPU is visible here";
    FAIL() << "a CUDA context without the CUDA backend";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("runtime.device"), std::string::npos) << message;
    if (!cuda_backend_built()) {
      EXPECT_NE(message.find("without the CUDA backend"), std::string::npos) << message;
    } else {
      EXPECT_NE(message.find("GPU"), std::string::npos) << message;
    }
  }
}

// Note [Attention default]: auto keeps the rows kernels until cuDNN has passed the GPU check.
TEST(AttentionSelection, AutoAndRowsRunTheRowsKernels) {
  EXPECT_EQ(resolved_attention(config_with({})), nn::CudaAttention::kRows);
  EXPECT_EQ(resolved_attention(config_with({"runtime.device=cuda", "precision.dtype=bf16"})),
            nn::CudaAttention::kRows);
  EXPECT_EQ(resolved_attention(config_with(
                {"runtime.device=cuda", "precision.dtype=bf16", "runtime.attention=rows"})),
            nn::CudaAttention::kRows);
  EXPECT_EQ(attention_description(config_with({})), "cpu");
  EXPECT_EQ(attention_description(config_with({"runtime.device=cuda"})), "rows");
}

TEST(AttentionSelection, CudnnIsRefusedOnTheCpuAndInFp32NamingTheKey) {
  const std::string on_cpu = testing::message_of<ConfigError>(
      [] { resolved_attention(config_with({"runtime.attention=cudnn"})); });
  EXPECT_CONTAINS(on_cpu, "--set runtime.attention=cudnn: runtime.attention = \"cudnn\"");
  EXPECT_CONTAINS(on_cpu, "runtime.device = \"cpu\"");
  const std::string in_fp32 = testing::message_of<ConfigError>([] {
    resolved_attention(config_with({"runtime.device=cuda", "runtime.attention=cudnn"}));
  });
  EXPECT_CONTAINS(in_fp32, "runtime.attention");
  EXPECT_CONTAINS(in_fp32, "precision.dtype = \"fp32\"");
  EXPECT_CONTAINS(in_fp32, "bf16");
}

TEST(AttentionSelection, CudnnInBf16OnCudaNeedsABuildWithIt) {
  const Config config =
      config_with({"runtime.device=cuda", "precision.dtype=bf16", "runtime.attention=cudnn"});
  if (nn::cudnn_attention_built()) {
    EXPECT_EQ(resolved_attention(config), nn::CudaAttention::kCudnn);
    EXPECT_TRUE(nn::cudnn_attention_missing().empty());
    // Both versions are named: the one compiled against and the one loaded.
    EXPECT_CONTAINS(attention_description(config), "cudnn (cuDNN 9.");
    EXPECT_CONTAINS(attention_description(config), " at build, ");
    EXPECT_CONTAINS(attention_description(config), " at run time)");
  } else {
    const std::string message =
        testing::message_of<ConfigError>([&] { resolved_attention(config); });
    EXPECT_CONTAINS(message, "runtime.attention");
    EXPECT_CONTAINS(message, "built without the cuDNN attention");
    EXPECT_CONTAINS(message, nn::cudnn_attention_missing());
    EXPECT_FALSE(nn::cudnn_attention_missing().empty());
  }
}

TEST(AttentionSelection, AnUnknownChoiceIsAConfigErrorListingTheChoices) {
  const std::string message =
      testing::message_of<ConfigError>([] { config_with({"runtime.attention=flash"}); });
  EXPECT_CONTAINS(message, "runtime.attention");
  EXPECT_CONTAINS(message, "cudnn");
  EXPECT_CONTAINS(message, "rows");
}

}  // namespace
}  // namespace zt::engine
