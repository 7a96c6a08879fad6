// bench_gpt_step: forward + backward of a small GPT on one rank (stage 0, fp32): tokens/s
// and achieved GFLOP/s, next to this machine's sgemm GFLOP/s from the library the runtime's
// GEMMs use (its name and the ISA it chose printed), measured in the same run with the same
// thread count. The ratio (achieved / sgemm) is the figure that matters:
// how much of the machine's matmul speed a whole training step keeps. `--quick` is tiny;
// `--shapes 110k,3.3M,20M` runs a subset of the three CPU shapes (named by parameter count);
// `--dtype bf16` runs them in bf16 (precision.dtype=bf16: bf16 weights and activations,
// fp32 master weights), the GEMM line then also giving oneDNN's bf16 GEMM rate. `--steps N`
// trains N steps per shape instead of the shape's own count (a longer run to profile).
// `--cuda [--model small|medium] [--peak-tflops X]` trains GPT-2 small (124M: 12 layers,
// d_model 768) or medium (355M: 24 layers, d_model 1024) on GPU 0 instead: vocabulary 50304,
// seq 1024, micro-batch 8, bf16, no activation checkpointing, on a token file it writes at
// startup (Note [The --cuda token file]). It reports tokens/s and MFU against the GPU's dense
// bf16 peak (default 989.4 TFLOP/s, NVIDIA's figure for the H100/H200 SXM), and the device
// peak the tracker saw.
#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/byte_size.h"
#include "core/config/config_loader.h"
#include "core/device/device_context.h"
#include "core/error.h"
#include "core/parallel_for.h"
#include "core/random.h"
#include "data/token_file_writer.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/engine/trainer.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Best-of-`repeats` sgemm rate for an (m, k) x (k, n) product.
double sgemm_gflops(std::int64_t m, std::int64_t n, std::int64_t k, int repeats) {
  std::vector<float> a(static_cast<std::size_t>(m * k), 0.5f),
      b(static_cast<std::size_t>(k * n), 0.25f), c(static_cast<std::size_t>(m * n));
  double best = 0.0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    zt::nn::cpu::gemm_f32(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
    best = std::max(best, 2.0 * static_cast<double>(m * n * k) / seconds_since(start) / 1e9);
  }
  return best;
}

// Best-of-`repeats` rate of oneDNN's bf16 GEMM (f32 accumulation) for the same product.
double bf16_gemm_gflops(std::int64_t m, std::int64_t n, std::int64_t k, int repeats) {
  std::vector<zt::BF16> a(static_cast<std::size_t>(m * k), zt::BF16(0.5f)),
      b(static_cast<std::size_t>(k * n), zt::BF16(0.25f));
  std::vector<float> c(static_cast<std::size_t>(m * n));
  double best = 0.0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    zt::nn::cpu::gemm_bf16(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(),
                           n);
    best = std::max(best, 2.0 * static_cast<double>(m * n * k) / seconds_since(start) / 1e9);
  }
  return best;
}

struct GptShape {
  int n_layer, n_head, d_model, vocab, seq_len, micro_batch;
};

// Training FLOPs per token: 6 per parameter (forward 2, backward 4) plus attention's score
// and value products, 12 · n_layer · seq_len · d_model (Kaplan et al. 2020, PaLM).
double step_flops(const GptShape& shape, double params);

// The config overrides that make a GPT of `shape` train `steps` steps, then `extra`.
std::vector<std::string> gpt_overrides(const GptShape& shape, int steps,
                                       std::initializer_list<std::string> extra) {
  std::vector<std::string> overrides{"model.type=gpt",
                                     "model.n_layer=" + std::to_string(shape.n_layer),
                                     "model.n_head=" + std::to_string(shape.n_head),
                                     "model.d_model=" + std::to_string(shape.d_model),
                                     "model.vocab_size=" + std::to_string(shape.vocab),
                                     "model.seq_len=" + std::to_string(shape.seq_len),
                                     "train.micro_batch_size=" + std::to_string(shape.micro_batch),
                                     "train.steps=" + std::to_string(steps)};
  overrides.insert(overrides.end(), extra);
  return overrides;
}

void run_gpt(const GptShape& shape, int steps, std::string_view dtype, double sgemm) {
  const zt::Config config = zt::parse_config_text(
      "", "bench_gpt_step",
      gpt_overrides(shape, steps, {"optimizer.lr=0.001", "precision.dtype=" + std::string(dtype)}));
  zt::comm::MemoryStore store;
  zt::MemoryTracker tracker(zt::Device::cpu());
  auto comm = zt::comm::create_cpu_communicator(store, 0, 1);
  zt::engine::Trainer trainer(config, *comm, tracker, zt::engine::quiet_trainer_options());
  const auto result = trainer.run();
  // The first step warms caches and allocator: time the rest.
  double ms = 0.0;
  for (std::size_t i = 1; i < result.metrics.size(); ++i) ms += result.metrics[i].step_ms;
  ms /= static_cast<double>(result.metrics.size() - 1);
  const double tokens = static_cast<double>(shape.micro_batch) * shape.seq_len;
  const double params = static_cast<double>(trainer.model().parameter_count());
  const double flops = step_flops(shape, params);
  const double gflops = flops / (ms / 1000.0) / 1e9;
  std::printf("%7d %5d %6d %6d %5d %10.0f %9.2f %10.0f %9.1f %7.2f\n", shape.n_layer, shape.d_model,
              shape.vocab, shape.seq_len, shape.micro_batch, params, ms, tokens / (ms / 1000.0),
              gflops, gflops / sgemm);
}

double step_flops(const GptShape& shape, double params) {
  const double tokens = static_cast<double>(shape.micro_batch) * shape.seq_len;
  return tokens * (6.0 * params + 12.0 * shape.n_layer * shape.seq_len * shape.d_model);
}

// Note [The --cuda token file]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The built-in synthetic corpus keeps a V x V transition table and so allows at most 1024
// tokens; GPT-2's vocabulary (50257, padded to 50304 = 393 * 128 so the classifier's GEMMs
// tile evenly, as llm.c does) needs a token file. The benchmark writes one at startup with
// data's TokenFileWriter, in the format `zerotrain prepare-data` writes, into a fresh
// temporary directory that it removes on exit: a seeded first-order Markov chain in which
// three tokens in four step a short, random stride past their predecessor and the fourth is
// uniform (structure to learn, unlike uniform ids). Its length covers every step's windows
// of seq_len + 1 tokens; the sampler draws windows anywhere in it. Throughput does not depend
// on the token values.
class GeneratedTokenFile {
 public:
  GeneratedTokenFile(std::uint32_t vocab, std::uint64_t tokens, std::uint64_t seed) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "zt_bench_gpt_step.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw zt::IoError("cannot create a temporary directory from '" + pattern +
                        "' for the generated token file (set TMPDIR to a writable directory)");
    }
    dir_ = pattern;
    path_ = dir_ / "tokens.bin";
    zt::data::TokenFileWriter writer(path_, vocab);
    const std::uint64_t key = zt::random_key(seed, 0x70CE4Eu);
    std::vector<std::int32_t> chunk;
    std::uint32_t previous = 0;
    for (std::uint64_t i = 0; i < tokens; ++i) {
      const float u_kind = zt::uniform01(key, 2 * i);
      const auto bits = static_cast<std::uint32_t>(zt::mix64(key ^ (2 * i + 1)));
      previous = u_kind < 0.75f ? (previous + 1 + bits % 8) % vocab : bits % vocab;
      chunk.push_back(static_cast<std::int32_t>(previous));
      if (chunk.size() == kChunkTokens || i + 1 == tokens) {
        writer.append(chunk);
        chunk.clear();
      }
    }
    writer.finish();
  }
  ~GeneratedTokenFile() {
    std::error_code ignored;  // a leftover temp directory is not worth failing the run for
    std::filesystem::remove_all(dir_, ignored);
  }
  GeneratedTokenFile(const GeneratedTokenFile&) = delete;
  GeneratedTokenFile& operator=(const GeneratedTokenFile&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  static constexpr std::size_t kChunkTokens = std::size_t{1} << 16;
  std::filesystem::path dir_;
  std::filesystem::path path_;
};

// GPT-2's published shapes at GPT-2's padded vocabulary, micro-batch 8, seq 1024.
std::optional<GptShape> gpt2_shape(std::string_view model) {
  if (model == "small") return GptShape{12, 12, 768, 50304, 1024, 8};    // 124M
  if (model == "medium") return GptShape{24, 16, 1024, 50304, 1024, 8};  // 355M
  return std::nullopt;
}

int run_gpt_cuda(const GptShape& shape, double peak_tflops) {
  const int steps = 6;
  const GeneratedTokenFile token_file(
      static_cast<std::uint32_t>(shape.vocab),
      static_cast<std::uint64_t>(steps) * shape.micro_batch * (shape.seq_len + 1), 1234);
  const zt::Config config = zt::parse_config_text(
      "", "bench_gpt_step",
      gpt_overrides(shape, steps,
                    {"optimizer.lr=0.0003", "precision.dtype=bf16", "runtime.device=cuda",
                     "activation_checkpointing.enabled=false",
                     // GPT-2's head reads the token embedding (124M parameters for small), as
                     // PyTorch's side of the comparison (bench/torch_gpt_step.py) has.
                     "model.tie_embeddings=true", "data.path=" + token_file.path().string()}));
  const std::unique_ptr<zt::DeviceContext> device = zt::make_device_context(zt::Device::cuda(0));
  zt::comm::MemoryStore store;
  zt::comm::CommOptions options;
  options.device = device.get();
  auto comm = zt::comm::create_communicator(store, 0, 1, options);
  zt::engine::Trainer trainer(config, zt::comm::CommLanes::single(*comm), *device,
                              zt::engine::quiet_trainer_options());
  const auto result = trainer.run();
  double ms = 0.0;
  for (std::size_t i = 1; i < result.metrics.size(); ++i) ms += result.metrics[i].step_ms;
  ms /= static_cast<double>(result.metrics.size() - 1);
  const double params = static_cast<double>(trainer.model().parameter_count());
  const double tokens = static_cast<double>(shape.micro_batch) * shape.seq_len;
  const double tflops = step_flops(shape, params) / (ms / 1000.0) / 1e12;
  std::printf("# %s, one rank, stage 0, bf16, AdamW; step time = mean over steps 2..%d\n",
              device->device().to_string().c_str(), steps);
  std::printf("%7s %5s %6s %6s %5s %10s %9s %10s %9s %7s\n", "n_layer", "d", "vocab", "seq",
              "batch", "params", "step_ms", "tokens/s", "TFLOP/s", "MFU");
  std::printf("%7d %5d %6d %6d %5d %10.0f %9.2f %10.0f %9.1f %7.3f\n", shape.n_layer, shape.d_model,
              shape.vocab, shape.seq_len, shape.micro_batch, params, ms, tokens / (ms / 1000.0),
              tflops, tflops / peak_tflops);
  std::printf("# MFU against %.1f TFLOP/s dense bf16; loss %.4f -> %.4f; device peak %s at '%s'\n",
              peak_tflops, result.losses.front(), result.losses.back(),
              zt::format_byte_size(device->tracker().total_peak_bytes()).c_str(),
              device->tracker().snapshot().total_peak_phase.c_str());
  return 0;
}

// The CPU shapes, named by their parameter counts, and the steps each trains (the first
// untimed). bench/pytorch_gpt_step.py lists the same shapes and steps.
struct CpuShape {
  std::string_view name;
  GptShape shape;
  int steps;
};

std::vector<CpuShape> cpu_shapes() {
  return {{"110k", {2, 4, 64, 64, 32, 16}, 8},
          {"3.3M", {4, 4, 256, 256, 128, 8}, 6},
          {"20M", {6, 8, 512, 1024, 256, 4}, 4}};
}

// The shapes a comma-separated list names, in its order; nullopt if a name is unknown.
std::optional<std::vector<CpuShape>> cpu_shapes_named(std::string_view list) {
  std::vector<CpuShape> chosen;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    const std::vector<CpuShape> all = cpu_shapes();
    const auto it = std::find_if(all.begin(), all.end(),
                                 [&](const CpuShape& shape) { return shape.name == name; });
    if (it == all.end()) return std::nullopt;
    chosen.push_back(*it);
  }
  if (chosen.empty()) return std::nullopt;
  return chosen;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? std::string_view(argv[1]) : "";
  if (mode == "--cuda") {
    double peak_tflops = 989.4;
    std::optional<GptShape> shape = gpt2_shape("small");
    bool usage_error = false;
    for (int i = 2; i < argc; i += 2) {
      const std::string_view flag = argv[i];
      if (i + 1 >= argc) {
        usage_error = true;
      } else if (flag == "--peak-tflops") {
        peak_tflops = std::atof(argv[i + 1]);
      } else if (flag == "--model") {
        shape = gpt2_shape(argv[i + 1]);
      } else {
        usage_error = true;
      }
    }
    if (usage_error || !shape || !(peak_tflops > 0)) {
      std::fprintf(stderr, "usage: %s --cuda [--model small|medium] [--peak-tflops X]\n", argv[0]);
      return 2;
    }
    try {
      return run_gpt_cuda(*shape, peak_tflops);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_gpt_step --cuda: %s\n", e.what());
      return 1;
    }
  }
  // `--shapes 110k,3.3M,20M` runs a subset of the CPU shapes (bench/compare_pytorch runs one
  // at a time, alternating with PyTorch's step); `--dtype bf16` runs them in bf16.
  bool quick = false;
  std::vector<CpuShape> shapes = cpu_shapes();
  std::string_view dtype = "fp32";
  int steps_override = 0;  // 0: each shape's own step count
  bool usage_error = false;
  for (int i = 1; i < argc && !usage_error; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--quick") {
      quick = true;
    } else if (flag == "--shapes" && i + 1 < argc) {
      const std::optional<std::vector<CpuShape>> chosen = cpu_shapes_named(argv[++i]);
      if (!chosen) {
        std::fprintf(stderr,
                     "%s: --shapes: expected a comma-separated list of 110k, 3.3M, 20M, got '%s'\n",
                     argv[0], argv[i]);
        return 2;
      }
      shapes = *chosen;
    } else if (flag == "--steps" && i + 1 < argc) {
      steps_override = std::atoi(argv[++i]);
      if (steps_override < 2) {  // the first step is untimed, so one more must follow it
        std::fprintf(stderr, "%s: --steps: expected an integer >= 2, got '%s'\n", argv[0], argv[i]);
        return 2;
      }
    } else if (flag == "--dtype" && i + 1 < argc) {
      dtype = argv[++i];
      if (dtype != "fp32" && dtype != "bf16") {
        std::fprintf(stderr, "%s: --dtype: expected fp32 or bf16, got '%s'\n", argv[0], argv[i]);
        return 2;
      }
    } else {
      usage_error = true;
    }
  }
  if (usage_error) {
    std::fprintf(
        stderr,
        "usage: %s [--quick | --shapes 110k,3.3M,20M] [--dtype fp32|bf16] [--steps N] | --cuda "
        "[--model small|medium] [--peak-tflops X]\n",
        argv[0]);
    return 2;
  }
  const int threads = zt::nn::cpu::blas_threads();
  zt::set_parallel_threads(threads);  // the other CPU loops share the GEMMs' threads
  const std::int64_t size = quick ? 256 : 1024;
  const double sgemm = sgemm_gflops(size, size, size, quick ? 2 : 5);
  std::printf("# GEMM library: %s; bf16 GEMM %s\n", zt::nn::cpu::gemm_library_description().c_str(),
              zt::nn::cpu::bf16_gemm_available() ? "available" : "not available");
  std::printf("# its sgemm %lld^3, %d thread(s): %.1f GFLOP/s (best of runs)\n",
              static_cast<long long>(size), threads, sgemm);
  if (dtype == "bf16" && zt::nn::cpu::bf16_gemm_available()) {
    std::printf("# its bf16 GEMM %lld^3: %.1f GFLOP/s (best of runs)\n",
                static_cast<long long>(size), bf16_gemm_gflops(size, size, size, quick ? 2 : 5));
  }
  std::printf("# one rank, stage 0, %.*s, AdamW; step time = mean over steps 2..n\n",
              static_cast<int>(dtype.size()), dtype.data());
  std::printf("%7s %5s %6s %6s %5s %10s %9s %10s %9s %7s\n", "n_layer", "d", "vocab", "seq",
              "batch", "params", "step_ms", "tokens/s", "GFLOP/s", "/sgemm");
  if (quick) {
    run_gpt({2, 4, 64, 64, 32, 4}, 3, dtype, sgemm);
    return 0;
  }
  for (const CpuShape& shape : shapes) {
    run_gpt(shape.shape, steps_override > 0 ? steps_override : shape.steps, dtype, sgemm);
  }
  return 0;
}
