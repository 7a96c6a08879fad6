// Trains a two-block MLP on the built-in synthetic classification task for 20 steps through
// the installed public API alone, and prints the first and the last step's loss.
#include <zerotrain/zerotrain.h>

#include <cstdio>
#include <memory>
#include <utility>

int main() try {
  const zerotrain::Config config = zerotrain::parse_config(R"(
    [model]
    type = "mlp"
    input_dim = 16
    num_classes = 4
    [train]
    steps = 20
    micro_batch_size = 32
    [optimizer]
    lr = 0.01
  )");
  zerotrain::nn::Model model("consumer_mlp");
  auto hidden = std::make_unique<zerotrain::nn::Sequential>();
  hidden->add(std::make_unique<zerotrain::nn::Linear>("hidden", 16, 32, true));
  hidden->add(std::make_unique<zerotrain::nn::Relu>());
  model.add_block("hidden", std::move(hidden));
  model.add_block("head", std::make_unique<zerotrain::nn::Linear>("head", 32, 4, true));

  zerotrain::EngineOptions options;
  options.write_run_dir = false;
  options.show_progress = false;
  zerotrain::Engine engine(config, std::move(model),
                           zerotrain::synthetic_classification_source(7, 16, 4), nullptr, options);
  const zerotrain::TrainSummary summary = engine.train();
  engine.finish();
  std::printf("steps %zu first loss %.6f last loss %.6f\n", summary.losses.size(),
              summary.losses.front(), summary.losses.back());
  return 0;
} catch (const zerotrain::Error& error) {
  std::fprintf(stderr, "zerotrain_consumer: error: %s\n", error.what());
  return 1;
}
