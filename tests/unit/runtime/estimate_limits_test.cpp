// The estimator at the edge of the config's ranges: a 1024-block, d_model 1,000,000 GPT and
// configs/gpt-70b.toml at world 64 are estimated in seconds with no host memory in
// proportion to the model (bucket ranges and shard segments are computed, not stored), and
// what it cannot walk or count is refused naming the key.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>

#include "core/config/config_loader.h"
#include "core/error.h"
#include "runtime/estimate/memory_estimator.h"
#include "support/sanitizers.h"
#include "support/test_paths.h"

namespace zt::estimate {
namespace {

// The process's peak resident bytes so far (ru_maxrss is in KiB on Linux).
std::int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return std::int64_t{usage.ru_maxrss} * 1024;
}

constexpr std::int64_t kSmallGrowthBytes = std::int64_t{256} << 20;

Config huge_gpt(std::vector<std::string> overrides = {}) {
  overrides.insert(
      overrides.begin(),
      {"model.type=gpt", "model.n_layer=1024", "model.n_head=64", "model.d_model=1000000",
       "model.vocab_size=32000", "model.seq_len=4096", "train.micro_batch_size=1",
       "train.grad_accum_steps=16", "precision.dtype=bf16", "zero.stage=3",
       "activation_checkpointing.enabled=true", "runtime.device=cuda"});
  return parse_config_text("", "huge.toml", overrides);
}

// Runs `fn`, asserting it takes under 30 s and grows the peak RSS by under 256 MiB.
template <typename Fn>
void expect_fast_and_small(const char* what, Fn fn) {
  const std::int64_t rss_before = peak_rss_bytes();
  const auto start = std::chrono::steady_clock::now();
  fn();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 30.0) << what;
  if (!zt::testing::kAddressSanitizer) {
    // Under ASan the quarantine keeps freed blocks resident: the default build checks this.
    EXPECT_LT(peak_rss_bytes() - rss_before, kSmallGrowthBytes) << what;
  }
}

TEST(EstimateLimits, HugeGptIsEstimatedWithoutHostMemoryInProportion) {
  // 12 288 081 410 000 000 parameters; 4 TiB buckets cut each block into 12 segments.
  const Config config = huge_gpt({"zero.reduce_bucket_size=\"4TiB\""});
  RankEstimate estimate;
  expect_fast_and_small("1024 x d_model 1e6", [&] { estimate = estimate_rank(config, 64, 0); });
  EXPECT_EQ(estimate.parameters, 12288081410000000);
  EXPECT_GT(estimate.memory.total_peak_bytes, estimate.parameters / 64);
}

TEST(EstimateLimits, Gpt70bAtWorld64IsEstimatedWithoutHostMemoryInProportion) {
  const Config config = load_config_file(zt::testing::source_dir() + "/configs/gpt-70b.toml", {});
  RankEstimate estimate;
  expect_fast_and_small("gpt-70b", [&] { estimate = estimate_rank(config, 64, 0); });
  EXPECT_EQ(estimate.parameters, 64990887936);
}

// The Llama-3-shaped configs: the published parameter counts (Llama 3.2 1B with its tied
// head, Llama 3 8B untied), estimated at world 8 in a blink.
TEST(EstimateLimits, Llama1bAnd8bConfigsAreEstimatedWithTheirPublishedParameterCounts) {
  const Config small = load_config_file(zt::testing::source_dir() + "/configs/llama-1b.toml", {});
  RankEstimate estimate;
  expect_fast_and_small("llama-1b", [&] { estimate = estimate_rank(small, 8, 0); });
  EXPECT_EQ(estimate.parameters, 1235814400);
  const Config large = load_config_file(zt::testing::source_dir() + "/configs/llama-8b.toml", {});
  expect_fast_and_small("llama-8b", [&] { estimate = estimate_rank(large, 8, 0); });
  EXPECT_EQ(estimate.parameters, 8030261248);
}

TEST(EstimateLimits, TooManyCollectivesPerPassNameTheBucketSize) {
  // 512 MiB buckets: about 92 million segments per pass (the estimate once built them all,
  // 13 GB of host memory, and never answered).
  const Config config = huge_gpt({"zero.reduce_bucket_size=\"512MiB\""});
  expect_fast_and_small("refusal", [&] {
    try {
      (void)estimate_rank(config, 64, 0);
      ADD_FAILURE() << "expected a ConfigError";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("zero.reduce_bucket_size: 512 MiB cuts this model"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("set it to at least"), std::string::npos) << e.what();
    }
  });
}

TEST(EstimateLimits, ActivationsBeyondInt64NameTheBatchSize) {
  // 1e11 x 4096 x 4e6 f32 elements: far past int64.
  const Config config =
      huge_gpt({"zero.reduce_bucket_size=\"4TiB\"", "train.micro_batch_size=100000000000"});
  try {
    (void)estimate_rank(config, 64, 0);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("train.micro_batch_size: a micro-batch of 100000000000"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zt::estimate
