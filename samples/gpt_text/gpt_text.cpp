// gpt_text: a small GPT trained on a text file, with the training loop in the program's own
// hands: it picks each step's samples, loads this rank's share from a token file, feeds it to
// Engine::step(batch), and measures a held-out range with Engine::evaluate every few steps.
#include <zerotrain/zerotrain.h>

#include <charconv>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

// The settings as a TOML file would hold them; `--set section.key=value` overrides any key.
// The vocabulary is prepare-data's byte-level one (256 tokens).
constexpr const char* kConfig = R"(
[run]
dir = "runs/gpt_text"
seed = 1234

[model]
type = "gpt"
n_layer = 2
n_head = 2
d_model = 32
vocab_size = 256
seq_len = 32

[train]
steps = 100
micro_batch_size = 4
grad_accum_steps = 2

[optimizer]
type = "adamw"
lr = 0.003

[scheduler]
type = "warmup_cosine"
warmup_steps = 5

[zero]
stage = 3
)";

constexpr const char* kUsage =
    "usage: gpt_text TOKENS.bin [--eval-every N] [--eval-samples N] [--set section.key=value]...";

struct Arguments {
  std::string token_file;
  std::int64_t eval_every = 20;   // steps between evaluations (and after the last step)
  std::int64_t eval_samples = 8;  // held-out samples per rank, each evaluation
  std::vector<std::string> overrides;
};

std::int64_t positive_integer(const std::string& flag, const std::string& text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value <= 0) {
    throw zerotrain::UsageError(flag + " expects a positive integer, got '" + text + "'");
  }
  return value;
}

Arguments parse_arguments(int argc, char** argv) {
  Arguments arguments;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--set" && has_value) {
      arguments.overrides.emplace_back(argv[++i]);
    } else if (arg == "--eval-every" && has_value) {
      arguments.eval_every = positive_integer(arg, argv[++i]);
    } else if (arg == "--eval-samples" && has_value) {
      arguments.eval_samples = positive_integer(arg, argv[++i]);
    } else if (arguments.token_file.empty() && !arg.empty() && arg[0] != '-') {
      arguments.token_file = arg;
    } else {
      throw zerotrain::UsageError("unexpected argument '" + arg + "'; " + kUsage);
    }
  }
  if (arguments.token_file.empty()) throw zerotrain::UsageError(kUsage);
  return arguments;
}

zerotrain::nn::GptShape gpt_shape(const zerotrain::Config& config) {
  zerotrain::nn::GptShape shape;
  shape.n_layer = config.model.n_layer;
  shape.n_head = config.model.n_head;
  shape.d_model = config.model.d_model;
  shape.vocab_size = config.model.vocab_size;
  shape.seq_len = config.model.seq_len;
  shape.tie_embeddings = config.model.tie_embeddings;
  return shape;
}

int run(const Arguments& arguments) {
  const zerotrain::Config config =
      zerotrain::parse_config(kConfig, arguments.overrides, "gpt_text");
  // Sample i is a window of seq_len + 1 tokens at a position drawn from the seed and i.
  const std::unique_ptr<zerotrain::BatchSource> text = zerotrain::token_file_source(
      arguments.token_file, config.model.seq_len, static_cast<std::uint64_t>(config.run.seed));

  zerotrain::EngineOptions options;
  options.targets_are_tokens = true;  // metrics report tokens/s
  options.show_progress = false;      // the loop below prints its own lines
  // No batch source and the default loss (softmax cross-entropy): every step comes from us.
  zerotrain::Engine engine(config, zerotrain::nn::make_gpt(gpt_shape(config)), nullptr, nullptr,
                           std::move(options));

  // Each step's global batch is G consecutive sample indices; this rank takes its `share`
  // of them (what step() expects: micro_batch_size × grad_accum_steps samples).
  const auto& train = engine.config().train;  // batch sizes resolved
  const std::int64_t share = train.micro_batch_size * train.grad_accum_steps;
  const std::int64_t global = share * engine.world_size();
  // The held-out samples come after every index training reads: no window is seen by both.
  const std::int64_t held_out_first = train.steps * global;
  const std::int64_t rank = engine.rank();

  // Batches are written on the host; the engine copies them to an accelerator if it runs on one.
  zerotrain::MemoryTracker& batch_tracker = engine.batch_memory();

  for (std::int64_t step = engine.steps_done() + 1; step <= train.steps; ++step) {
    const zerotrain::Batch batch =
        text->load({(step - 1) * global + rank * share, share}, batch_tracker);
    const zerotrain::StepMetrics metrics = engine.step(batch);
    if (rank == 0) {
      std::printf("step %lld loss %.4f lr %.2e tokens/s %.0f\n", static_cast<long long>(step),
                  metrics.loss, metrics.lr, metrics.tokens_per_s);
    }
    if (step % arguments.eval_every == 0 || step == train.steps) {
      // Collective: every rank evaluates its own eval_samples of the held-out range.
      const zerotrain::Batch held_out = text->load(
          {held_out_first + rank * arguments.eval_samples, arguments.eval_samples}, batch_tracker);
      const double loss = engine.evaluate(held_out);
      if (rank == 0) std::printf("eval step %lld loss %.4f\n", static_cast<long long>(step), loss);
    }
    if (rank == 0) std::fflush(stdout);  // the launcher relays lines as they come
  }
  engine.finish();
  if (rank == 0) std::printf("done: %s\n", engine.memory_summary().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_arguments(argc, argv));
  } catch (const zerotrain::Error& e) {
    std::fprintf(stderr, "gpt_text: error: %s\n", e.what());
    return e.exit_code();
  }
}
