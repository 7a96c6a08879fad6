// The smallest complete zerotrain program: a two-block MLP on the built-in synthetic
// classification task, trained as its config says. Arguments are config overrides
// ("zero.stage=3", or "--set zero.stage=3"). Run it alone, or on 2 ranks:
//   zerotrain launch --nproc-per-node 2 -- ./minimal zero.stage=3
#include <zerotrain/zerotrain.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

int main(int argc, char** argv) try {
  namespace nn = zerotrain::nn;
  std::vector<std::string> overrides;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) != "--set") overrides.emplace_back(argv[i]);
  }
  const zerotrain::Config config = zerotrain::parse_config(R"(
    [run]
    dir = "runs/minimal"
    [train]
    steps = 100
    global_batch_size = 64
    [optimizer]
    lr = 0.003
  )",
                                                           overrides);

  nn::Model model("minimal_mlp");
  auto hidden = std::make_unique<nn::Sequential>();
  hidden->add(std::make_unique<nn::Linear>("hidden", 32, 128, /*bias=*/true));
  hidden->add(std::make_unique<nn::Relu>());
  model.add_block("hidden", std::move(hidden));
  model.add_block("head", std::make_unique<nn::Linear>("head", 128, 10, /*bias=*/true));

  zerotrain::EngineOptions options;
  options.show_progress = false;  // the callback below is the log
  options.on_step = [](zerotrain::Engine& engine, const zerotrain::StepMetrics& step) {
    if (engine.rank() == 0 && step.step % 20 == 0) {
      std::printf("step %lld loss %.4f\n", static_cast<long long>(step.step), step.loss);
    }
  };
  zerotrain::Engine engine(config, std::move(model),
                           zerotrain::synthetic_classification_source(1234, 32, 10),
                           /*loss=*/nullptr, options);  // null: softmax cross-entropy
  const zerotrain::TrainSummary summary = engine.train();
  engine.finish();
  if (engine.rank() == 0) {
    std::printf("loss %.4f -> %.4f\n", summary.losses.front(), summary.losses.back());
  }
  return 0;
} catch (const zerotrain::Error& e) {
  std::fprintf(stderr, "minimal: %s\n", e.what());
  return 1;
}
