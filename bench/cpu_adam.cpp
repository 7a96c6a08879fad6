// bench_cpu_adam: the fused CPU AdamW (optim/cpu_adam) against the memory bandwidth it is
// bounded by, in one run: a STREAM triad over the same footprint (1 and 2 threads), a plain
// loop over math::adam_update, and every path this CPU has at 1 and 2 threads, with and
// without the fused bf16 copy. The cases run round-robin, so a neighbour's load slows them
// alike; each figure is the median of the rounds.
// Usage: bench_cpu_adam [--elements N] [--rounds R]
#include "optim/cpu_adam/cpu_adam.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bench/cpuinfo.h"
#include "core/dtype.h"
#include "optim/cpu_adam/cpu_adam_pool.h"
#include "optim/math/optimizer_math.h"

namespace {

using Clock = std::chrono::steady_clock;
using zt::optim::CpuAdamGroup;
using zt::optim::CpuAdamPath;
using zt::optim::CpuAdamPool;

// A 64-byte-aligned buffer (cache lines; every vector width divides it).
template <typename T>
struct AlignedBuffer {
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T[], Free> data;
  explicit AlignedBuffer(std::size_t count)
      : data(static_cast<T*>(std::aligned_alloc(64, (count * sizeof(T) + 63) / 64 * 64))) {
    if (!data) {
      std::fprintf(stderr, "bench_cpu_adam: cannot allocate %zu bytes\n", count * sizeof(T));
      std::exit(1);
    }
  }
  T* get() const { return data.get(); }
};

using zt::bench::cpuinfo_field;

bool has_flag(const std::string& flags, std::string_view flag) {
  std::istringstream words(flags);
  std::string word;
  while (words >> word) {
    if (word == flag) return true;
  }
  return false;
}

// Runs fn(first, count) over [0, total) split into `threads` contiguous parts, one thread each.
void parallel_for(int threads, std::size_t total,
                  const std::function<void(std::size_t, std::size_t)>& fn) {
  std::vector<std::thread> workers;
  const std::size_t part =
      (total + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
  for (int t = 0; t < threads; ++t) {
    const std::size_t first = std::min(total, static_cast<std::size_t>(t) * part);
    const std::size_t count = std::min(part, total - first);
    workers.emplace_back([&fn, first, count] { fn(first, count); });
  }
  for (std::thread& worker : workers) worker.join();
}

struct Case {
  std::string kernel;
  int threads = 1;
  std::string copy;     // "-" or the compute dtype written in the same pass
  double bytes = 0;     // moved per run, STREAM's way: each array read or written once
  double elements = 0;  // parameters updated per run (0 for the yardsticks)
  std::function<void()> run;
  std::vector<double> seconds;

  double median_seconds() const {
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    return sorted[sorted.size() / 2];
  }
  double gb_per_s() const { return bytes / median_seconds() / 1e9; }
};

Case make_case(std::string kernel, int threads, std::string copy, double bytes, double elements,
               std::function<void()> run) {
  Case c;
  c.kernel = std::move(kernel);
  c.threads = threads;
  c.copy = std::move(copy);
  c.bytes = bytes;
  c.elements = elements;
  c.run = std::move(run);
  return c;
}

// One warm-up run of every case (page faults, thread start), then `rounds` rounds of all cases
// in turn, so that load from elsewhere falls on every case alike.
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

const Case& find_case(const std::vector<Case>& cases, std::string_view kernel, int threads) {
  for (const Case& c : cases) {
    if (c.kernel == kernel && c.threads == threads) return c;
  }
  std::fprintf(stderr, "bench_cpu_adam: no case %s at %d threads\n", std::string(kernel).c_str(),
               threads);
  std::exit(1);
}

constexpr std::string_view kTriad = "stream triad";
constexpr std::string_view kSweep = "sweep p,m,v += 0*g";
constexpr std::string_view kPlain = "plain adam_update loop";

void print_table(const std::vector<Case>& cases) {
  const double plain_seconds = find_case(cases, kPlain, 1).median_seconds();
  std::printf(
      "# GB/s counts each array once per pass (STREAM's convention: the triad's write-allocate\n"
      "# read of a[] is not counted; Adam writes only lines it has read, so it has none);\n"
      "# 'of triad' = GB/s / triad GB/s at the same thread count (goal >= 0.8);\n"
      "# 'of sweep' = the same against a sweep with Adam's own access pattern and no arithmetic;\n"
      "# 'vs plain' = plain adam_update loop time / this time\n");
  std::printf("%-24s %7s %5s %8s %9s %7s %8s %8s %8s\n", "kernel", "threads", "copy", "ms",
              "Gparam/s", "GB/s", "of triad", "of sweep", "vs plain");
  const std::string chosen =
      "cpu_adam " + std::string(zt::optim::cpu_adam_path_name(zt::optim::best_cpu_adam_path()));
  for (const Case& c : cases) {
    const double seconds = c.median_seconds();
    std::printf("%-24s %7d %5s %8.1f ", c.kernel.c_str(), c.threads, c.copy.c_str(), seconds * 1e3);
    if (c.elements == 0) {
      std::printf("%9s %7.2f %8s %8s %8s\n", "-", c.gb_per_s(), "-", "-", "-");
      continue;
    }
    std::printf("%9.3f %7.2f %8.2f %8.2f %7.2fx\n", c.elements / seconds / 1e9, c.gb_per_s(),
                c.gb_per_s() / find_case(cases, kTriad, c.threads).gb_per_s(),
                c.gb_per_s() / find_case(cases, kSweep, c.threads).gb_per_s(),
                plain_seconds / seconds);
  }
  for (int threads : {1, 2}) {
    const Case* best = nullptr;
    for (const Case& c : cases) {
      if (c.kernel == chosen && c.threads == threads && c.copy == "-") best = &c;
    }
    std::printf(
        "# %s at %d thread(s): %.2f of the triad's GB/s (goal >= 0.8), %.2f of the sweep's,"
        " %.2fx the plain loop\n",
        chosen.c_str(), threads, best->gb_per_s() / find_case(cases, kTriad, threads).gb_per_s(),
        best->gb_per_s() / find_case(cases, kSweep, threads).gb_per_s(),
        plain_seconds / best->median_seconds());
  }
}

// The optimizer's sub-group (p, g, m, v in fp32 and the bf16 copy of p) and the triad's three
// double arrays, which hold as many bytes as p, g, m and v together.
struct BenchBuffers {
  std::size_t elements;
  std::size_t triad_elements;
  AlignedBuffer<float> params, grads, exp_avg, exp_avg_sq;
  AlignedBuffer<std::uint16_t> compute;
  AlignedBuffer<double> triad_a, triad_b, triad_c;

  explicit BenchBuffers(std::size_t n)
      : elements(n),
        triad_elements(n * 4 * sizeof(float) / 3 / sizeof(double)),
        params(n),
        grads(n),
        exp_avg(n),
        exp_avg_sq(n),
        compute(n),
        triad_a(triad_elements),
        triad_b(triad_elements),
        triad_c(triad_elements) {
    for (std::size_t i = 0; i < n; ++i) {
      params.get()[i] = static_cast<float>(i % 1000) * 1e-3f - 0.5f;
      grads.get()[i] = static_cast<float>((i * 7919) % 2001) * 1e-3f - 1.0f;
      exp_avg.get()[i] = 0.0f;
      exp_avg_sq.get()[i] = 0.0f;
      compute.get()[i] = 0;
    }
    for (std::size_t i = 0; i < triad_elements; ++i) {
      triad_a.get()[i] = 0.0;
      triad_b.get()[i] = 1.0;
      triad_c.get()[i] = 2.0;
    }
  }
  CpuAdamGroup group(bool bf16_copy) const {
    CpuAdamGroup g;
    g.params = params.get();
    g.grads = grads.get();
    g.exp_avg = exp_avg.get();
    g.exp_avg_sq = exp_avg_sq.get();
    g.elements = elements;
    if (bf16_copy) {
      g.compute_params = compute.get();
      g.compute_dtype = zt::DType::kBF16;
    }
    return g;
  }
};

void print_cpu_header() {
  const std::string flags = cpuinfo_field("flags");
  auto yes_no = [&](std::string_view flag) { return has_flag(flags, flag) ? "yes" : "no"; };
  std::printf("# CPU: %s\n", cpuinfo_field("model name").c_str());
  std::printf("# flags: avx2 %s, fma %s, f16c %s, avx512f %s, avx512_bf16 %s\n", yes_no("avx2"),
              yes_no("fma"), yes_no("f16c"), yes_no("avx512f"), yes_no("avx512_bf16"));
  std::printf("# paths:");
  for (CpuAdamPath path : zt::optim::available_cpu_adam_paths()) {
    std::printf(" %s", std::string(zt::optim::cpu_adam_path_name(path)).c_str());
  }
  std::printf("; chosen (best_cpu_adam_path): %s\n",
              std::string(zt::optim::cpu_adam_path_name(zt::optim::best_cpu_adam_path())).c_str());
}

// The yardsticks' loops, each compiled twice, for baseline x86-64 and for AVX2, so that they
// move memory with the same vector width as the kernels, as STREAM compiled for the machine
// would: on an AVX-512 EPYC the sweep's 128-bit SSE loop ran at ~0.75 of its AVX2 speed.
inline void triad_loop(double* __restrict a, const double* __restrict b, const double* __restrict c,
                       std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) a[i] = b[i] + 3.0 * c[i];
}
__attribute__((target("avx2"))) void triad_avx2(double* __restrict a, const double* __restrict b,
                                                const double* __restrict c, std::size_t count) {
  triad_loop(a, b, c, count);
}
void triad_baseline(double* __restrict a, const double* __restrict b, const double* __restrict c,
                    std::size_t count) {
  triad_loop(a, b, c, count);
}

// The sweep: p, m, v += scale·g.
inline void sweep_loop(float* __restrict p, const float* __restrict g, float* __restrict m,
                       float* __restrict v, std::size_t count, float scale) {
  for (std::size_t i = 0; i < count; ++i) {
    const float nothing = scale * g[i];
    p[i] += nothing;
    m[i] += nothing;
    v[i] += nothing;
  }
}
__attribute__((target("avx2"))) void sweep_avx2(float* __restrict p, const float* __restrict g,
                                                float* __restrict m, float* __restrict v,
                                                std::size_t count, float scale) {
  sweep_loop(p, g, m, v, count, scale);
}
void sweep_baseline(float* __restrict p, const float* __restrict g, float* __restrict m,
                    float* __restrict v, std::size_t count, float scale) {
  sweep_loop(p, g, m, v, count, scale);
}

// The yardsticks: STREAM's triad, and a sweep with Adam's access pattern (read p, g, m, v;
// write p, m, v) whose arithmetic cannot be folded away (its scale is read from a volatile).
void add_yardsticks(std::vector<Case>& cases, BenchBuffers& b, int threads) {
  const double adam_bytes = static_cast<double>(b.elements) * 7 * sizeof(float);
  cases.push_back(make_case(
      std::string(kTriad), threads, "-",
      3.0 * sizeof(double) * static_cast<double>(b.triad_elements), 0, [&b, threads] {
        const bool avx2 = zt::optim::cpu_adam_path_available(CpuAdamPath::kAvx2);
        parallel_for(threads, b.triad_elements, [&b, avx2](std::size_t first, std::size_t count) {
          double* x = b.triad_a.get() + first;
          const double* y = b.triad_b.get() + first;
          const double* z = b.triad_c.get() + first;
          if (avx2) {
            triad_avx2(x, y, z, count);
          } else {
            triad_baseline(x, y, z, count);
          }
        });
      }));
  cases.push_back(make_case(std::string(kSweep), threads, "-", adam_bytes, 0, [&b, threads] {
    volatile float volatile_zero = 0.0f;
    const float zero = volatile_zero;
    const bool avx2 = zt::optim::cpu_adam_path_available(CpuAdamPath::kAvx2);
    parallel_for(threads, b.elements, [&b, zero, avx2](std::size_t first, std::size_t count) {
      float* p = b.params.get() + first;
      const float* g = b.grads.get() + first;
      float* m = b.exp_avg.get() + first;
      float* v = b.exp_avg_sq.get() + first;
      if (avx2) {
        sweep_avx2(p, g, m, v, count, zero);
      } else {
        sweep_baseline(p, g, m, v, count, zero);
      }
    });
  }));
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t elements = std::size_t{64} << 20;
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--elements" && i + 1 < argc) {
      elements = std::stoull(argv[++i]);
    } else if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::stoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--elements N] [--rounds R]\n", argv[0]);
      return 2;
    }
  }
  print_cpu_header();
  BenchBuffers b(elements);
  std::printf(
      "# %zu elements: p, g, m, v = %.2f GiB of fp32; triad 3 x %zu doubles; median of %d"
      " rounds\n",
      elements, static_cast<double>(elements) * 16 / (1 << 30), b.triad_elements, rounds);
  // A realistic step's scalars: AdamW, weight decay 0.01, at step 10.
  zt::optim::math::AdamStepScalars scalars{};
  scalars.lr = 1e-4f;
  scalars.beta1 = 0.9f;
  scalars.beta2 = 0.999f;
  scalars.eps = 1e-8f;
  scalars.weight_decay = 0.01f;
  scalars.bias_correction1 = static_cast<float>(1.0 - std::pow(0.9, 10.0));
  scalars.bias_correction2 = static_cast<float>(1.0 - std::pow(0.999, 10.0));
  scalars.decoupled = true;

  const double n = static_cast<double>(elements);
  const double adam_bytes = n * 7 * sizeof(float);  // read p, g, m, v; write p, m, v
  const double copy_bytes = n * sizeof(std::uint16_t);
  std::vector<Case> cases;
  for (int threads : {1, 2}) add_yardsticks(cases, b, threads);
  // The loop any caller would write first, compiled for baseline x86-64 like the rest.
  cases.push_back(make_case(std::string(kPlain), 1, "-", adam_bytes, n, [&b, &scalars] {
    float* p = b.params.get();
    const float* g = b.grads.get();
    float* m = b.exp_avg.get();
    float* v = b.exp_avg_sq.get();
    for (std::size_t i = 0; i < b.elements; ++i) {
      zt::optim::math::adam_update(p[i], g[i], m[i], v[i], scalars);
    }
  }));
  CpuAdamPool pool1(1), pool2(2);
  const CpuAdamGroup group = b.group(false), group_bf16 = b.group(true);
  for (CpuAdamPath path : zt::optim::available_cpu_adam_paths()) {
    for (CpuAdamPool* pool : {&pool1, &pool2}) {
      const std::string name = "cpu_adam " + std::string(zt::optim::cpu_adam_path_name(path));
      cases.push_back(make_case(name, pool->threads(), "-", adam_bytes, n,
                                [&, path, pool] { pool->step(path, group, scalars); }));
      cases.push_back(make_case(name, pool->threads(), "bf16", adam_bytes + copy_bytes, n,
                                [&, path, pool] { pool->step(path, group_bf16, scalars); }));
    }
  }
  run_round_robin(cases, rounds);
  print_table(cases);
  return 0;
}
