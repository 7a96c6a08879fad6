// bench_nvme_offload: what moving the optimizer states to NVMe (offload.optimizer = "nvme")
// costs over keeping them in host memory ("cpu"), in one run, and what the disk under the
// state directory does with direct I/O.
// (1) Step time nvme ÷ cpu for the same GPT at zero.stage = 1 on one rank, the two runs
//     interleaved round by round, medians of the steps after the first compared (the first
//     step reads no states: they start at zero).
// (2) Sequential O_DIRECT write and read GB/s of a state file in that directory, through
//     the I/O path the optimizer uses, 8 MiB transfers, 4 in flight.
// Usage: bench_nvme_offload [--quick] [--dir DIR]   (DIR defaults to $TMPDIR or /tmp)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "offload/aligned_host_buffer.h"
#include "offload/async_file_io.h"
#include "offload/nvme_state_file.h"
#include "optim/cpu_adam/cpu_adam.h"
#include "runtime/engine/trainer.h"

namespace {

using Clock = std::chrono::steady_clock;

zt::Config gpt(const std::string& offload, const std::string& dir, int steps) {
  std::vector<std::string> overrides{"model.type=gpt",
                                     "model.n_layer=4",
                                     "model.n_head=4",
                                     "model.d_model=256",
                                     "model.vocab_size=256",
                                     "model.seq_len=32",
                                     "train.micro_batch_size=2",
                                     "train.steps=" + std::to_string(steps),
                                     "zero.stage=1",
                                     "offload.optimizer=" + offload,
                                     "offload.cpu_threads=1",
                                     "offload.sub_group_size=1048576"};
  if (offload == "nvme") overrides.push_back("offload.nvme_path=" + dir);
  return zt::parse_config_text("", "bench_nvme_offload", overrides);
}

// Rank 0's step times after the first step.
std::vector<double> step_ms(const zt::Config& config, std::int64_t& parameters) {
  zt::comm::MemoryStore store;
  zt::MemoryTracker tracker(zt::Device::cpu(0));
  auto comm = zt::comm::create_cpu_communicator(store, 0, 1);
  zt::engine::Trainer trainer(config, *comm, tracker, zt::engine::quiet_trainer_options());
  const zt::engine::TrainResult result = trainer.run();
  parameters = trainer.model().parameter_count();
  std::vector<double> times;
  for (std::size_t i = 1; i < result.metrics.size(); ++i)
    times.push_back(result.metrics[i].step_ms);
  return times;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

// "ext4 on /dev/vda (mounted at /)": the mount that holds `dir` (the longest prefix).
std::string filesystem_of(const std::string& dir) {
  std::ifstream mounts("/proc/self/mounts");
  std::string best_point, best;
  for (std::string line; std::getline(mounts, line);) {
    std::istringstream fields(line);
    std::string device, point, type;
    fields >> device >> point >> type;
    const bool holds = dir.rfind(point, 0) == 0 &&
                       (point == "/" || dir.size() == point.size() || dir[point.size()] == '/');
    if (holds && point.size() >= best_point.size()) {
      best_point = point;
      best = type + " on " + device + " (mounted at " + point + ")";
    }
  }
  return best.empty() ? "unknown filesystem" : best;
}

struct Throughput {
  double write_gbps = 0;
  double read_gbps = 0;
  std::string io_name;
};

Throughput sequential_io(const std::string& dir, std::int64_t file_bytes) {
  constexpr std::int64_t kTransfer = 8 << 20;
  constexpr int kInFlight = 4;
  zt::offload::NvmeStateFile file(dir, file_bytes);
  auto io = zt::offload::make_async_file_io(file.fd(), file.path(), zt::offload::FileIoPath::kBest);
  zt::MemoryTracker tracker(zt::Device::cpu());
  std::vector<zt::offload::AlignedHostBuffer> buffers;
  for (int i = 0; i < kInFlight; ++i) {
    buffers.emplace_back(kTransfer, tracker, zt::MemoryCategory::kHostOffload);
    std::fill_n(buffers.back().floats(), kTransfer / 4, 1.0f + static_cast<float>(i));
  }
  const auto pass = [&](bool write) {
    std::vector<std::uint64_t> tickets(kInFlight, 0);
    const auto start = Clock::now();
    for (std::int64_t offset = 0, n = 0; offset < file_bytes; offset += kTransfer, ++n) {
      const auto slot = static_cast<std::size_t>(n % kInFlight);
      if (tickets[slot] != 0) io->wait(tickets[slot]);
      void* data = buffers[slot].data();
      tickets[slot] = write ? io->start_write(data, kTransfer, offset)
                            : io->start_read(data, kTransfer, offset);
    }
    for (std::uint64_t t : tickets) {
      if (t != 0) io->wait(t);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return static_cast<double>(file_bytes) / seconds / 1e9;
  };
  Throughput result;
  result.io_name = io->name();
  result.write_gbps = pass(true);
  if (fdatasync(file.fd()) != 0) std::perror("fdatasync");
  result.read_gbps = pass(false);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else {
      std::fprintf(stderr, "usage: bench_nvme_offload [--quick] [--dir DIR]\n");
      return 2;
    }
  }
  try {
    zt::nn::cpu::set_blas_threads(1);
    std::printf("bench_nvme_offload: %s; states under %s, %s\n", cpu_model().c_str(), dir.c_str(),
                filesystem_of(dir).c_str());
    std::fflush(stdout);  // before the optimizer says which I/O path it takes, on stderr
    const int rounds = quick ? 1 : 3;
    const int steps = quick ? 3 : 6;
    std::vector<double> cpu, nvme;
    std::int64_t parameters = 0;
    for (int round = 0; round < rounds; ++round) {
      for (double ms : step_ms(gpt("cpu", dir, steps), parameters)) cpu.push_back(ms);
      for (double ms : step_ms(gpt("nvme", dir, steps), parameters)) nvme.push_back(ms);
    }
    std::printf(
        "\nstep time, GPT %lld parameters, zero.stage 1, 1 rank, CPU Adam %s x 1 thread, "
        "sub-groups of 1 Mi elements (median of %zu steps each, interleaved)\n",
        static_cast<long long>(parameters),
        std::string(zt::optim::cpu_adam_path_name(zt::optim::best_cpu_adam_path())).c_str(),
        cpu.size());
    std::printf("  offload cpu    %8.2f ms\n", median(cpu));
    std::printf("  offload nvme   %8.2f ms\n", median(nvme));
    std::printf("  nvme / cpu     %8.3f\n", median(nvme) / median(cpu));
    const std::int64_t file_bytes = (quick ? 256LL : 1024LL) << 20;
    const Throughput io = sequential_io(dir, file_bytes);
    std::printf("\nsequential O_DIRECT, %lld MiB file, 8 MiB transfers x 4 in flight, %s\n",
                static_cast<long long>(file_bytes >> 20), io.io_name.c_str());
    std::printf("  write          %8.2f GB/s\n", io.write_gbps);
    std::printf("  read           %8.2f GB/s\n", io.read_gbps);
  } catch (const zt::Error& e) {
    std::fprintf(stderr, "bench_nvme_offload: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
