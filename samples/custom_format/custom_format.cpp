// custom_format: training on data in a format of your own. A BatchSource reads the sample's
// record file (record_file.h) and serves its records by sample index; `--write FILE N`
// generates such a file, a classification task an MLP can learn.
#include <zerotrain/zerotrain.h>

#include <charconv>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "record_file.h"

namespace {

// The settings as a TOML file would hold them; `--set section.key=value` overrides any key.
constexpr const char* kConfig = R"(
[run]
dir = "runs/custom_format"
seed = 7

[train]
steps = 60
micro_batch_size = 16

[optimizer]
type = "adamw"
lr = 0.01

[zero]
stage = 3
)";

constexpr const char* kUsage =
    "usage: custom_format --write FILE N     write N records of a generated task to FILE\n"
    "       custom_format FILE [--set section.key=value]...   train an MLP on FILE";

constexpr std::uint32_t kFeatures = 8;
constexpr std::uint32_t kClasses = 4;

// Sample i is record i mod N: train.steps may run over the file more than once (epochs).
class RecordSource final : public zerotrain::BatchSource {
 public:
  explicit RecordSource(record_file::Contents contents) : contents_(std::move(contents)) {}

  const record_file::Header& header() const { return contents_.header; }

  zerotrain::Batch load(zerotrain::SampleRange range,
                        zerotrain::MemoryTracker& tracker) const override {
    const std::int64_t features = contents_.header.features;
    zerotrain::Batch batch;
    batch.samples = range.count;
    batch.inputs = zerotrain::Tensor::empty({range.count, features}, zerotrain::DType::kF32,
                                            tracker, zerotrain::MemoryCategory::kActivations);
    batch.targets = zerotrain::Tensor::empty({range.count}, zerotrain::DType::kI32, tracker,
                                             zerotrain::MemoryCategory::kActivations);
    float* x = batch.inputs.data_as<float>();
    std::int32_t* label = batch.targets.data_as<std::int32_t>();
    const auto records = static_cast<std::int64_t>(contents_.header.records);
    for (std::int64_t row = 0; row < range.count; ++row) {
      const std::int64_t record = (range.first + row) % records;
      for (std::int64_t j = 0; j < features; ++j) {
        x[row * features + j] = contents_.features[record * features + j];
      }
      label[row] = contents_.labels[record];
    }
    return batch;
  }

 private:
  record_file::Contents contents_;
};

// N records whose label is the largest of kClasses fixed linear scores of the features.
record_file::Contents generate(std::uint64_t records) {
  std::mt19937_64 rng(2024);
  std::normal_distribution<float> normal;
  std::vector<float> teacher(kClasses * kFeatures);
  for (float& w : teacher) w = normal(rng);
  record_file::Contents contents;
  contents.header = {records, kFeatures, kClasses};
  for (std::uint64_t r = 0; r < records; ++r) {
    float best = 0;
    std::int32_t best_class = 0;
    const std::size_t first = contents.features.size();
    for (std::uint32_t j = 0; j < kFeatures; ++j) contents.features.push_back(normal(rng));
    for (std::uint32_t c = 0; c < kClasses; ++c) {
      float score = 0;
      for (std::uint32_t j = 0; j < kFeatures; ++j) {
        score += teacher[c * kFeatures + j] * contents.features[first + j];
      }
      if (c == 0 || score > best) best = score, best_class = static_cast<std::int32_t>(c);
    }
    contents.labels.push_back(best_class);
  }
  return contents;
}

int write_command(const std::string& path, const std::string& count_text) {
  std::uint64_t records = 0;
  const auto [end, error] =
      std::from_chars(count_text.data(), count_text.data() + count_text.size(), records);
  if (error != std::errc() || end != count_text.data() + count_text.size() || records == 0) {
    throw zerotrain::UsageError("--write expects a record count >= 1, got '" + count_text + "'");
  }
  record_file::write(path, generate(records));
  std::printf("wrote %llu records of %u features (%u classes) to %s\n",
              static_cast<unsigned long long>(records), kFeatures, kClasses, path.c_str());
  return 0;
}

int train_command(const std::string& path, const std::vector<std::string>& overrides) {
  const zerotrain::Config config = zerotrain::parse_config(kConfig, overrides, "custom_format");
  // The file is read and checked before the job starts: a bad file stops this rank here.
  auto source = std::make_unique<RecordSource>(record_file::read(path));
  const record_file::Header header = source->header();
  zerotrain::nn::Model model = zerotrain::nn::make_mlp(
      {static_cast<std::int64_t>(header.features), 32, static_cast<std::int64_t>(header.classes)});

  zerotrain::EngineOptions options;
  options.show_progress = false;  // on_step logs instead
  options.on_step = [](zerotrain::Engine& engine, const zerotrain::StepMetrics& m) {
    if (engine.rank() != 0) return;
    std::printf("step %lld loss %.4f\n", static_cast<long long>(m.step), m.loss);
    std::fflush(stdout);
  };
  // No loss given: softmax cross-entropy over the labels.
  zerotrain::Engine engine(config, std::move(model), std::move(source), nullptr,
                           std::move(options));
  engine.train();
  engine.finish();
  if (engine.rank() == 0) std::printf("done: %s\n", engine.memory_summary().c_str());
  return 0;
}

int run(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "--write") {
    if (args.size() != 3) throw zerotrain::UsageError(kUsage);
    return write_command(args[1], args[2]);
  }
  if (args.empty() || args[0].empty() || args[0][0] == '-') throw zerotrain::UsageError(kUsage);
  std::vector<std::string> overrides;
  for (std::size_t i = 1; i < args.size(); i += 2) {
    if (args[i] != "--set" || i + 1 == args.size()) {
      throw zerotrain::UsageError("unexpected argument '" + args[i] + "'\n" + kUsage);
    }
    overrides.push_back(args[i + 1]);
  }
  return train_command(args[0], overrides);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const zerotrain::Error& e) {
    std::fprintf(stderr, "custom_format: error: %s\n", e.what());
    return e.exit_code();
  }
}
