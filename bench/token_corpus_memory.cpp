// bench_token_corpus_memory: how much a rank's resident memory grows while it reads a 1 GiB
// llm.c token file window by window, in one run:
//   data source  1,000 batches of 8 windows of 1,024 tokens drawn through the sampler
//   training     1,000 steps of a tiny GPT (vocab 50257) on the same file, by a trainer
//                built after a first one ran one step; its growth includes this trainer's
//                own model, optimizer states and step buffers (where the allocator did not
//                reuse the first one's), so it bounds what reading the data adds from above
// and the ratio that matters: growth ÷ file size (a reader that held the file as i32 would
// show 2.0). The file is written into DIR and removed at the end.
// Usage: bench_token_corpus_memory [--dir DIR] [--steps N]   (DIR defaults to $TMPDIR or /tmp)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "data/distributed_sampler.h"
#include "data/llmc_token_file.h"
#include "data/token_corpus.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/engine/trainer.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kVocab = 50257;
constexpr std::uint64_t kFileBytes = std::uint64_t{1} << 30;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double mib(std::int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// The process's resident bytes now (VmRSS).
std::int64_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return -1;
}

// A 1 GiB llm.c v1 file (uint16 tokens, pseudo-random ids below kVocab), written in 8 MiB
// pieces so writing it costs no memory either.
void write_llmc_file(const fs::path& path) {
  const std::uint64_t tokens = (kFileBytes - zt::data::kLlmcHeaderBytes) / 2;
  std::vector<unsigned char> piece(8 << 20);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  std::fill(piece.begin(), piece.begin() + zt::data::kLlmcHeaderBytes, 0);
  const std::uint32_t header[3] = {zt::data::kLlmcMagicU16, 1, static_cast<std::uint32_t>(tokens)};
  for (std::size_t i = 0; i < 12; ++i)
    piece[i] = static_cast<unsigned char>(header[i / 4] >> (8 * (i % 4)));
  out.write(reinterpret_cast<const char*>(piece.data()), zt::data::kLlmcHeaderBytes);
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  for (std::uint64_t written = 0; written < tokens;) {
    const std::uint64_t count = std::min<std::uint64_t>(piece.size() / 2, tokens - written);
    for (std::uint64_t i = 0; i < count; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const auto id = static_cast<std::uint32_t>((state >> 33) % kVocab);
      piece[2 * i] = static_cast<unsigned char>(id);
      piece[2 * i + 1] = static_cast<unsigned char>(id >> 8);
    }
    out.write(reinterpret_cast<const char*>(piece.data()), static_cast<std::streamsize>(2 * count));
    written += count;
  }
  out.close();
  if (!out) {
    std::fprintf(stderr, "bench_token_corpus_memory: cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

struct Row {
  const char* what;
  std::int64_t before = 0;
  std::int64_t after = 0;
  double seconds = 0;
};

Row drive_data_source(const fs::path& path, std::int64_t steps) {
  std::vector<zt::data::TokenShard> shards;
  shards.push_back(zt::data::open_token_shard(path, zt::data::TokenFileFormat::kAuto));
  const auto source = zt::data::make_token_corpus_source(std::move(shards), kVocab, 1024, 1234);
  zt::MemoryTracker tracker(zt::Device::cpu());
  const zt::data::DistributedSampler sampler(8, 1, 1, 0);
  source->load(sampler.micro_batch(0, 0), tracker);  // the first batch's buffers
  Row row{"data source (8 x 1024 tokens a step)"};
  row.before = resident_bytes();
  const auto start = Clock::now();
  for (std::int64_t step = 1; step <= steps; ++step)
    source->load(sampler.micro_batch(step, 0), tracker);
  row.seconds = seconds_since(start);
  row.after = resident_bytes();
  return row;
}

Row train(const fs::path& path, std::int64_t steps) {
  zt::nn::cpu::set_blas_threads(1);
  const auto config = [&](std::int64_t n) {
    return zt::parse_config_text(
        "", "bench.toml",
        {"model.type=gpt", "model.n_layer=1", "model.n_head=2", "model.d_model=32",
         "model.vocab_size=" + std::to_string(kVocab), "model.seq_len=64",
         "train.micro_batch_size=4", "train.steps=" + std::to_string(n),
         "data.path=" + path.string(), "run.log_every=100000"});
  };
  zt::comm::MemoryStore store;
  zt::MemoryTracker tracker{zt::Device::cpu()};
  const auto comm = zt::comm::create_cpu_communicator(store, 0, 1);
  // One step first, so the model, the optimizer states and a step's buffers are resident.
  zt::engine::Trainer warm(config(1), *comm, tracker, zt::engine::quiet_trainer_options());
  warm.run();
  Row row{"training (tiny GPT, 4 x 64 tokens a step)"};
  row.before = resident_bytes();
  zt::engine::Trainer trainer(config(steps), *comm, tracker, zt::engine::quiet_trainer_options());
  const auto start = Clock::now();
  trainer.run();
  row.seconds = seconds_since(start);
  row.after = resident_bytes();
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  const char* tmp = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): read at start
  fs::path dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  std::int64_t steps = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--dir")
      dir = argv[i + 1];
    else if (flag == "--steps")
      steps = std::stoll(argv[i + 1]);
  }
  const fs::path path = dir / ("bench_token_corpus_" + std::to_string(::getpid()) + ".bin");
  const auto written = Clock::now();
  write_llmc_file(path);
  std::printf("wrote %s: %.0f MiB llm.c v1 file in %.1f s\n", path.c_str(), mib(kFileBytes),
              seconds_since(written));
  std::vector<Row> rows;
  try {
    rows.push_back(drive_data_source(path, steps));
    rows.push_back(train(path, steps));
  } catch (const std::exception& e) {
    fs::remove(path);
    std::fprintf(stderr, "bench_token_corpus_memory: %s\n", e.what());
    return 1;
  }
  fs::remove(path);
  std::printf("\n%-42s %8s %12s %12s %12s %10s\n", "reader", "steps", "RSS before", "RSS after",
              "growth", "seconds");
  for (const Row& row : rows) {
    std::printf("%-42s %8lld %9.1f MiB %9.1f MiB %9.1f MiB %10.1f\n", row.what,
                static_cast<long long>(steps), mib(row.before), mib(row.after),
                mib(row.after - row.before), row.seconds);
  }
  std::int64_t worst = 0;
  for (const Row& row : rows) worst = std::max(worst, row.after - row.before);
  std::printf(
      "\ngrowth / file size: %.4f (the whole file as i32 would be 2.0); goal: growth "
      "< 64 MiB: %s\n",
      static_cast<double>(worst) / static_cast<double>(kFileBytes),
      worst < (std::int64_t{64} << 20) ? "met" : "NOT met");
  return 0;
}
