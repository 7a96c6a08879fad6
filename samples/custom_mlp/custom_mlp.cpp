// custom_mlp: a model and a dataset of your own, trained ZeRO-sharded with Engine::train().
// The model is three blocks of zerotrain's layers; the data is a noisy linear regression that
// a BatchSource generates from each sample's index, so every rank agrees on every sample.
#include <zerotrain/zerotrain.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr std::int64_t kInputDim = 16;
constexpr std::int64_t kHiddenDim = 64;

// The settings as a TOML file would hold them; `--set section.key=value` overrides any key.
constexpr const char* kConfig = R"(
run.dir = "runs/custom_mlp"
train.steps = 40
train.micro_batch_size = 16
optimizer.lr = 0.01
zero.stage = 3
)";

// y = Σ_j w_j·x_j + 0.05·noise with w_j = 1 - j/8; x and the noise are drawn from the sample's
// index, so sample i is the same whichever rank loads it, whenever.
class NoisyLinearRegression final : public zerotrain::BatchSource {
 public:
  zerotrain::Batch load(zerotrain::SampleRange range,
                        zerotrain::MemoryTracker& tracker) const override {
    const auto f32 = [&](std::int64_t columns) {
      return zerotrain::Tensor::empty(zerotrain::Shape{range.count, columns},
                                      zerotrain::DType::kF32, tracker,
                                      zerotrain::MemoryCategory::kActivations);
    };
    zerotrain::Batch batch{f32(kInputDim), f32(1), range.count};
    float* x = batch.inputs.data_as<float>();
    float* y = batch.targets.data_as<float>();
    for (std::int64_t row = 0; row < range.count; ++row, x += kInputDim) {
      std::mt19937_64 rng(static_cast<std::uint64_t>(range.first + row));
      std::normal_distribution<float> normal;
      y[row] = 0.05f * normal(rng);
      for (std::int64_t j = 0; j < kInputDim; ++j) {
        y[row] += (1 - static_cast<float>(j) / 8) * (x[j] = normal(rng));
      }
    }
    return batch;
  }
};

// Each block is what ZeRO stage 3 gathers before its forward and releases after.
zerotrain::nn::Model make_model() {
  namespace nn = zerotrain::nn;
  nn::Model model("custom_mlp");
  for (int b = 0; b < 2; ++b) {
    auto block = std::make_unique<nn::Sequential>();
    block->add(std::make_unique<nn::Linear>("fc", b == 0 ? kInputDim : kHiddenDim, kHiddenDim,
                                            /*bias=*/true));
    block->add(std::make_unique<nn::Relu>());
    model.add_block("hidden." + std::to_string(b), std::move(block));
  }
  model.add_block("head", std::make_unique<nn::Linear>("out", kHiddenDim, 1, /*bias=*/true));
  return model;
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<std::string> overrides;  // custom_mlp [--set section.key=value]...
  for (int i = 1; i < argc; i += 2) {
    if (std::string(argv[i]) != "--set" || i + 1 == argc) {
      throw zerotrain::UsageError(std::string("unexpected '") + argv[i] +
                                  "'; usage: custom_mlp [--set section.key=value]...");
    }
    overrides.emplace_back(argv[i + 1]);
  }
  zerotrain::EngineOptions options;
  options.show_progress = false;  // on_step logs instead
  options.on_step = [](zerotrain::Engine& engine, const zerotrain::StepMetrics& m) {
    if (engine.rank() != 0) return;
    std::printf("step %lld loss %.6f\n", static_cast<long long>(m.step), m.loss);
    std::fflush(stdout);  // the launcher relays lines as they come
  };
  zerotrain::Engine engine(zerotrain::parse_config(kConfig, overrides, "custom_mlp"), make_model(),
                           std::make_unique<NoisyLinearRegression>(),
                           zerotrain::make_mean_squared_error_loss(), std::move(options));
  engine.train();
  engine.finish();
  if (engine.rank() == 0) std::printf("done: %s\n", engine.memory_summary().c_str());
  return 0;
} catch (const zerotrain::Error& e) {
  std::fprintf(stderr, "custom_mlp: error: %s\n", e.what());
  return e.exit_code();
}
