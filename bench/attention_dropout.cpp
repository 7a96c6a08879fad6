// bench_attention_dropout: what dropout on the attention probabilities (Note [Attention
// dropout]) costs the CPU attention, in one run: forward + backward without dropout, and with
// dropout's mask loops on each vector instruction set this CPU runs (baseline: x86-64's SSE2,
// what every CPU runs; Note [Vector dropout masks]), at a GPT-like shape and a bigger one; then
// the mask loops alone in ns per element. The cases run round-robin, so a neighbour's load
// slows them alike; each figure is the median of the rounds.
// Usage: bench_attention_dropout [--rounds R] [--p P]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/cpuinfo.h"
#include "core/memory_tracker.h"
#include "core/parallel_for.h"
#include "core/random.h"
#include "core/tensor.h"
#include "core/vector_isa.h"
#include "nn/kernels/attention_heads.h"
#include "nn/kernels/cpu/attention_cpu.h"
#include "nn/kernels/cpu/attention_dropout_cpu.h"
#include "nn/kernels/cpu/attention_rows_cpu.h"
#include "nn/kernels/math/attention_dropout_math.h"

namespace {

using Clock = std::chrono::steady_clock;
using zt::VectorIsa;

using zt::bench::cpuinfo_field;

// The 1, 5 and 15 minute load averages: these figures are only as quiet as the machine.
std::string load_average() {
  std::ifstream loadavg("/proc/loadavg");
  std::string one, five, fifteen;
  loadavg >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

struct Case {
  std::string what;
  std::function<void()> run;
  std::vector<double> seconds;
  double median_ms() const {
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    return sorted[sorted.size() / 2] * 1e3;
  }
};

// One warm-up run of every case, then `rounds` rounds of all cases in turn.
void run_round_robin(std::vector<Case>& cases, int rounds) {
  for (Case& c : cases) c.run();
  for (int round = 0; round < rounds; ++round) {
    for (Case& c : cases) {
      const auto start = Clock::now();
      c.run();
      c.seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
  }
}

struct Shape {
  const char* what;
  std::int64_t batch, seq_len, n_head, head_dim;
};

// f32 q, k, v in one fused (B, T, 3 C) tensor, as a GPT block's projection writes them.
struct Operands {
  Operands(const Shape& s, zt::MemoryTracker& tracker)
      : qkv(make(zt::Shape{s.batch, s.seq_len, 3 * s.n_head * s.head_dim}, tracker)),
        dqkv(make(qkv.shape(), tracker)),
        y(make(zt::Shape{s.batch, s.seq_len, s.n_head * s.head_dim}, tracker)),
        dy(make(y.shape(), tracker)),
        lse(make(zt::Shape{s.batch, s.n_head, s.seq_len}, tracker)),
        x(zt::nn::split_qkv(qkv, s.n_head, s.n_head)),
        dx(zt::nn::split_qkv(dqkv, s.n_head, s.n_head)),
        o(zt::nn::AttentionHeads::packed(y, s.n_head)),
        d_o(zt::nn::AttentionHeads::packed(dy, s.n_head)) {
    for (std::int64_t i = 0; i < qkv.numel(); ++i) {
      qkv.data_as<float>()[i] = zt::standard_normal(1, static_cast<std::uint64_t>(i));
    }
    for (std::int64_t i = 0; i < dy.numel(); ++i) {
      dy.data_as<float>()[i] = zt::standard_normal(2, static_cast<std::uint64_t>(i));
    }
  }
  static zt::Tensor make(const zt::Shape& shape, zt::MemoryTracker& tracker) {
    return zt::Tensor::zeros(shape, zt::DType::kF32, tracker, zt::MemoryCategory::kActivations);
  }

  // forward + backward; dropout with the mask loops on isa where mask is not null
  void step(zt::MemoryTracker& tracker, const zt::nn::math::DropoutMask* mask,
            VectorIsa isa) const {
    using zt::nn::cpu::Bf16AttentionProducts;
    const auto products = Bf16AttentionProducts::kBf16WhereAvailable;
    zt::nn::cpu::attention_forward(x.q, x.k, x.v, o, lse, tracker, products, mask, isa);
    zt::nn::cpu::attention_backward(x.q, x.k, x.v, o, lse, d_o, dx.q, dx.k, dx.v, tracker, products,
                                    mask, isa);
  }

  zt::Tensor qkv, dqkv, y, dy, lse;
  zt::nn::QkvHeads x, dx;
  zt::nn::AttentionHeads o, d_o;
};

// The attention table: forward + backward per shape, without dropout and with it per ISA.
void attention_table(const zt::nn::math::DropoutMask& mask, int rounds) {
  const Shape shapes[] = {{"GPT-like", 4, 256, 4, 32}, {"bigger", 4, 1024, 8, 64}};
  std::printf("attention forward + backward, f32, p = %.2f (median of %d rounds):\n",
              1.0f - 1.0f / mask.scale, rounds);
  std::printf("  %-34s %-26s %10s %10s\n", "shape", "dropout", "ms", "/ none");
  for (const Shape& s : shapes) {
    zt::MemoryTracker tracker(zt::Device::cpu());
    const Operands operands(s, tracker);
    std::vector<Case> cases;
    cases.push_back(
        {"none", [&] { operands.step(tracker, nullptr, zt::widest_vector_isa()); }, {}});
    for (const VectorIsa isa : zt::supported_vector_isas()) {
      cases.push_back({"mask loops on " + std::string(zt::vector_isa_name(isa)),
                       [&, isa] { operands.step(tracker, &mask, isa); },
                       {}});
    }
    run_round_robin(cases, rounds);
    const std::string shape = std::string(s.what) + " B" + std::to_string(s.batch) + " T" +
                              std::to_string(s.seq_len) + " nh" + std::to_string(s.n_head) + " hs" +
                              std::to_string(s.head_dim);
    for (const Case& c : cases) {
      std::printf("  %-34s %-26s %10.2f %10.3f\n", shape.c_str(), c.what.c_str(), c.median_ms(),
                  c.median_ms() / cases.front().median_ms());
    }
  }
}

// The mask loops alone on a (64, 256) block of one thread, every key visible, ns per element.
void loop_table(const zt::nn::math::DropoutMask& mask, int rounds) {
  constexpr std::int64_t kRows = 64, kKeys = 256, kBlocks = 64;
  std::vector<float> p(kRows * kKeys, 0.5f), dp(kRows * kKeys, 0.25f), d(kRows, 0.1f);
  const auto head = zt::nn::math::attention_dropout_head(mask, 0, 1, 4096);
  std::vector<Case> cases;
  for (const VectorIsa isa : zt::supported_vector_isas()) {
    cases.push_back({"forward on " + std::string(zt::vector_isa_name(isa)),
                     [&, isa] {
                       for (std::int64_t block = 0; block < kBlocks; ++block) {
                         const zt::nn::cpu::ScoreBlock s{p.data(), kKeys, kRows, kKeys, kKeys};
                         zt::nn::cpu::attention_dropout_rows(head, block * kRows, 0, s, isa);
                       }
                     },
                     {}});
    cases.push_back({"backward on " + std::string(zt::vector_isa_name(isa)),
                     [&, isa] {
                       for (std::int64_t block = 0; block < kBlocks; ++block) {
                         const zt::nn::cpu::ScoreBlock s{p.data(), kKeys, kRows, kKeys, kKeys};
                         zt::nn::cpu::attention_dropout_score_gradient_rows(
                             head, block * kRows, 0, s, dp.data(), d.data(), isa);
                       }
                     },
                     {}});
  }
  // what a pass over the block costs without a hash: the bound on fusing the mask into the
  // softmax's loops (Note [Vector dropout masks])
  cases.push_back(
      {"no-dropout dS pass on " + std::string(zt::vector_isa_name(zt::widest_vector_isa())),
       [&] {
         for (std::int64_t block = 0; block < kBlocks; ++block) {
           zt::nn::cpu::attention_score_gradient_rows(p.data(), dp.data(), kKeys, kRows, kKeys,
                                                      d.data());
         }
       },
       {}});
  run_round_robin(cases, rounds);
  const double elements = static_cast<double>(kRows * kKeys * kBlocks);
  std::printf("mask loops alone, one thread, (%lld, %lld) blocks:\n", static_cast<long long>(kRows),
              static_cast<long long>(kKeys));
  std::printf("  %-26s %12s %12s\n", "loop", "ns/element", "/ baseline");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const double ns = cases[i].median_ms() * 1e6 / elements;
    const double baseline_ns = cases[i % 2].median_ms() * 1e6 / elements;  // same direction
    std::printf("  %-26s %12.3f %12.3f\n", cases[i].what.c_str(), ns, ns / baseline_ns);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7;
  float p = 0.1f;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--p" && i + 1 < argc) {
      p = static_cast<float>(std::atof(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: bench_attention_dropout [--rounds R] [--p P]\n");
      return 2;
    }
  }
  std::printf("CPU: %s, %lld threads, widest vector ISA %s\n", cpuinfo_field("model name").c_str(),
              static_cast<long long>(zt::parallel_threads()),
              std::string(zt::vector_isa_name(zt::widest_vector_isa())).c_str());
  const zt::nn::math::DropoutMask mask{
      zt::nn::math::dropout_stream(1234, 7, 0, zt::nn::math::DropoutSite::kAttentionProbs), 0,
      zt::nn::math::dropout_threshold(p), 1.0f / (1.0f - p)};
  const std::string load_before = load_average();
  attention_table(mask, rounds);
  loop_table(mask, rounds);
  std::printf("load average (1, 5, 15 min) before %s, after %s\n", load_before.c_str(),
              load_average().c_str());
  return 0;
}
