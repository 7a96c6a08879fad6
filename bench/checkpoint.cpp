// bench_checkpoint: what saving and loading a checkpoint of the 20M-parameter GPT costs on
// this machine, next to what the disk under the checkpoint directory writes sequentially,
// all in one run:
//   host copy   the part of a save training waits for (the state shard copied to host memory)
//   write       one rank's file written, fsynced and renamed (the background part)
//   load        the checkpoint opened, verified (CRC-32C) and read back into the strategy
//   disk        a file of the same size written with write(2) in 8 MiB pieces and fsynced
// and the ratio write ÷ disk (how close saving comes to the disk's speed).
// Usage: bench_checkpoint [--dir DIR] [--repeats N]   (DIR defaults to $TMPDIR or /tmp)
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/checkpoint/checkpoint_directory.h"
#include "runtime/checkpoint/checkpoint_reader.h"
#include "runtime/checkpoint/run_id.h"
#include "runtime/checkpoint/shard_writer.h"
#include "runtime/engine/trainer.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Sequential write(2) of `bytes` in 8 MiB pieces, then fsync: seconds.
double disk_write_seconds(const fs::path& path, std::uint64_t bytes) {
  std::vector<char> piece(std::size_t{8} << 20, 'z');
  const auto start = Clock::now();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror("open");
    std::exit(1);
  }
  for (std::uint64_t done = 0; done < bytes;) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(piece.size(), bytes - done));
    if (::write(fd, piece.data(), n) != static_cast<ssize_t>(n)) {
      std::perror("write");
      std::exit(1);
    }
    done += n;
  }
  ::fsync(fd);
  ::close(fd);
  const double seconds = seconds_since(start);
  fs::remove(path);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const char* tmp = std::getenv("TMPDIR");
  fs::path dir = tmp != nullptr ? tmp : "/tmp";
  int repeats = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--dir") dir = argv[i + 1];
    if (flag == "--repeats") repeats = std::max(1, std::atoi(argv[i + 1]));
  }
  dir /= "zt_bench_checkpoint_" + std::to_string(::getpid());
  fs::create_directories(dir);
  zt::nn::cpu::set_blas_threads(2);
  // The 20M-parameter shape of bench_gpt_step; one rank, stage 0, AdamW (3 fp32 tensors).
  const zt::Config config = zt::parse_config_text(
      "", "bench_checkpoint",
      {"model.type=gpt", "model.n_layer=6", "model.n_head=8", "model.d_model=512",
       "model.vocab_size=1024", "model.seq_len=256", "train.micro_batch_size=1", "train.steps=10",
       "optimizer.type=adamw", "optimizer.lr=0.001"});
  zt::comm::MemoryStore store;
  auto comm = zt::comm::create_cpu_communicator(store, 0, 1, {});
  zt::MemoryTracker tracker(zt::Device::cpu());
  zt::engine::Trainer trainer(config, *comm, tracker, zt::engine::quiet_trainer_options());
  (void)trainer.step(
      trainer.load_step_batch(*zt::engine::training_parts_from_config(config).source, 1));
  zt::zero::ZeroStrategy& strategy = trainer.strategy();
  const zt::zero::StateShard shard = strategy.state_shard();
  const int tensors = 3;

  std::printf("bench_checkpoint: GPT %lld parameters, 1 rank, AdamW: %d fp32 tensors per element\n",
              static_cast<long long>(strategy.layout().numel), tensors);
  std::printf("%6s %10s %10s %10s %10s %10s %10s %8s\n", "round", "MiB", "copy s", "write s",
              "write GB/s", "load s", "disk GB/s", "w/disk");
  std::vector<double> ratios;
  const std::string run_id = zt::checkpoint::new_run_id();
  for (int round = 0; round < repeats; ++round) {
    const fs::path partial = zt::checkpoint::prepare_partial(dir, 1, run_id);
    zt::checkpoint::ShardWrite write;
    write.directory = partial;
    write.header.world_size = 1;
    write.header.tensors = tensors;
    write.header.step = 1;
    write.header.shard_numel = shard.numel;
    write.header.run_count = static_cast<std::int64_t>(shard.runs.size());
    write.runs = shard.runs;
    auto start = Clock::now();
    std::vector<float*> out;
    for (int t = 0; t < tensors; ++t) {
      write.tensors.push_back(
          zt::checkpoint::HostFloats::uninitialized(static_cast<std::size_t>(shard.numel)));
      out.push_back(write.tensors.back().data.get());
    }
    strategy.export_states(out);
    const double copy_s = seconds_since(start);
    zt::checkpoint::ShardWriter writer;
    start = Clock::now();
    writer.start(std::move(write));
    zt::checkpoint::Manifest manifest;
    manifest.files.push_back(writer.wait());
    const double write_s = seconds_since(start);
    const std::uint64_t bytes = manifest.files[0].bytes;
    manifest.world_size = 1;
    manifest.trainer.step = 1;
    manifest.optimizer = "adamw";
    manifest.state_names = zt::checkpoint::state_names("adamw", 2);
    manifest.numel = strategy.layout().numel;
    manifest.run_id = run_id;
    manifest.parameters = zt::checkpoint::describe_parameters(strategy.layout());
    fs::remove(partial / (manifest.files[0].name + ".done"));
    const fs::path saved =
        zt::checkpoint::commit_partial(partial, 1, zt::checkpoint::manifest_to_toml(manifest), {});
    start = Clock::now();
    {
      const zt::checkpoint::CheckpointReader reader(saved);
      reader.verify();
      std::vector<std::vector<float>> in_tensors(
          tensors, std::vector<float>(static_cast<std::size_t>(shard.numel)));
      std::vector<float*> in;
      for (auto& t : in_tensors) in.push_back(t.data());
      reader.read_shard(strategy.load_shard(), in);
      std::vector<const float*> in_const(in.begin(), in.end());
      strategy.import_states(in_const);
    }
    const double load_s = seconds_since(start);
    fs::remove_all(saved);
    const double disk_s = disk_write_seconds(dir / "disk-probe", bytes);
    const double write_gbs = static_cast<double>(bytes) / write_s / 1e9;
    const double disk_gbs = static_cast<double>(bytes) / disk_s / 1e9;
    ratios.push_back(write_gbs / disk_gbs);
    std::printf("%6d %10.1f %10.3f %10.3f %10.2f %10.3f %10.2f %8.2f\n", round + 1,
                static_cast<double>(bytes) / (1 << 20), copy_s, write_s, write_gbs, load_s,
                disk_gbs, write_gbs / disk_gbs);
  }
  std::sort(ratios.begin(), ratios.end());
  std::printf("median write / disk sequential write: %.2f (%d rounds; directory %s)\n",
              ratios[ratios.size() / 2], repeats, dir.parent_path().string().c_str());
  fs::remove_all(dir);
  return 0;
}
