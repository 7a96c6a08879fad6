// Joining a job: store connection, run.dir, device, communicators, CPU threads; leaving it.
#include "runtime/engine/rank_session.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "comm/local_address.h"
#include "comm/store/memory_store.h"
#include "comm/topology_exchange.h"
#include "core/parallel_for.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/engine/device_selection.h"
#include "runtime/engine/fault_injection.h"
#include "runtime/engine/memory_report.h"
#include "runtime/engine/supported_config.h"
#include "runtime/launch/rank_env.h"
#include "runtime/launch/rendezvous_store.h"

namespace zt::engine {
namespace {

int blas_threads_for(const Config& config, int local_world_size) {
  if (config.runtime.blas_threads > 0) return static_cast<int>(config.runtime.blas_threads);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / std::max(1, local_world_size));
}

comm::CollectiveCheckMode collective_check_mode(CollectiveCheckKind kind) {
  switch (kind) {
    case CollectiveCheckKind::kStep:
      return comm::CollectiveCheckMode::kStep;
    case CollectiveCheckKind::kEvery:
      return comm::CollectiveCheckMode::kEvery;
    case CollectiveCheckKind::kOff:
      break;
  }
  return comm::CollectiveCheckMode::kOff;
}

}  // namespace

RankSession::RankSession(const Config& config, bool write_run_dir)
    : config_(config), write_run_dir_(write_run_dir) {
  const std::optional<launch::RankEnv> env = launch::read_rank_env();
  rank_ = env ? env->rank : 0;
  world_size_ = env ? env->world_size : 1;
  local_rank_ = env ? env->local_rank : 0;
  local_world_size_ = env ? env->local_world_size : 1;
  timeout_ =
      std::chrono::milliseconds(static_cast<std::int64_t>(config.runtime.comm_timeout_s * 1000.0));
  if (rank_ == 0 && write_run_dir_) {
    check_memory_report_writable(config.run.dir);
    // Before any connection, so a second run into a run.dir in use stops at once.
    run_directory_ = RunDirectory::claim(config);
  }

  // Several ranks meet on the launcher's store, or on rank 0's when no launcher runs.
  if (world_size_ > 1) {
    rendezvous_ = std::make_unique<launch::RendezvousStore>(*env, timeout_);
    store_ = &rendezvous_->store();
  } else {
    local_store_ = std::make_unique<comm::MemoryStore>();
    store_ = local_store_.get();
  }
  // libnccl.so.2 is opened here, before any peer is waited for (comm.backend = "auto" without
  // it moves tensors with Gloo).
  const CommChoice comm_choice =
      available_comm_backend(config, [] { return comm::nccl_library_problem(); });
  if (comm_choice.warning && rank_ == 0) {
    std::fprintf(stderr, "zerotrain: warning: %s\n", comm_choice.warning->c_str());
  }
  const CommBackendKind backend = comm_choice.backend;
  device_ = make_device_context(rank_device(config, local_rank_),
                                config.runtime.device_memory_limit_bytes);
  // The GEMMs and the other CPU loops (parallel_for) share the rank's share of the cores.
  const int cpu_threads = blas_threads_for(config, local_world_size_);
  nn::cpu::set_blas_threads(cpu_threads);
  set_parallel_threads(cpu_threads);

  comm::CommOptions options;
  options.timeout = timeout_;
  options.device = device_.get();
  // The trainer keeps its step and phase in the device tracker; each op records them.
  flight_recorder_ = std::make_shared<comm::FlightRecorder>(
      rank_, comm::FlightRecorder::kDefaultCapacity, &device_->tracker(), world_size_);
  options.flight_recorder = flight_recorder_;
  collective_check_ = std::make_shared<comm::CollectiveCheck>(
      collective_check_mode(config.comm.check_collectives), &device_->tracker());
  options.collective_check = collective_check_;
  options.op_skip_fault = op_skip_fault_for(fault_plan_from_env(), rank_, &device_->tracker());
  options.backend =
      backend == CommBackendKind::kNccl ? comm::CommBackend::kNccl : comm::CommBackend::kGloo;
  // Gloo's scratch buffers are host memory: counted in the rank's tracker on the CPU only.
  if (device_->device().kind == DeviceKind::kCpu) options.memory_tracker = &device_->tracker();
  // Peers reach this rank's Gloo device at the address this machine talks to the store's
  // host from (on the network all nodes share; loopback for a one-machine run).
  if (env) options.bind_address = comm::local_address_toward(env->master_addr);
  // One communicator per lane, so the loss reduction never waits behind bulk traffic.
  lanes_ = std::make_unique<comm::OwnedCommLanes>(
      comm::create_comm_lanes(*store_, rank_, world_size_, options));
  // After the lanes: their rendezvous is the one a launcher watches for ranks that never
  // come, and it names them; here every rank is known to be up.
  if (env && world_size_ > 1) {
    const comm::NodeIdentity mine{env->node_rank, env->local_rank, comm::this_host_name()};
    topology_ = comm::exchange_topology(*store_, "zerotrain/", rank_, world_size_, mine, timeout_);
    // The lanes count bytes by node from here on (Note [Counting bytes by node]).
    lanes_->lanes().place_ranks(topology_.nodes_by_rank());
    check_groups_fit_nodes(config_, topology_);
  }
  if (write_run_dir_) {
    dump_signals_ = FlightDumpSignals::install(
        [this](const std::string& reason) { write_flight_record(reason); });
    // Written even over a failure's record: the ring holds that failure's op too.
    dump_on_terminate_ = FlightDumpOnTerminate::install(
        [this](const std::string& reason) { write_flight_record(reason); });
  }
}

RankSession::~RankSession() {
  dump_signals_.reset();  // no signal's record is written while the session goes
  dump_on_terminate_.reset();
  if (config_.comm.dump_on_exit && !failure_recorded_) {
    write_flight_record(finished_ ? "exit: the run ended" : "exit: the run stopped on an error");
  }
}

std::filesystem::path RankSession::write_flight_record(const std::string& reason) const noexcept {
  if (!write_run_dir_) return {};  // a session told to leave run.dir alone writes nothing there
  try {
    const std::lock_guard lock(flight_write_mutex_);
    namespace fs = std::filesystem;
    const fs::path directory = fs::path(config_.run.dir) / "flight";
    const fs::path path = directory / ("rank-" + std::to_string(rank_) + ".json");
    std::error_code error;
    fs::create_directories(directory, error);
    if (error || fs::is_symlink(fs::symlink_status(directory)) || !fs::is_directory(directory)) {
      std::fprintf(stderr,
                   "zerotrain: warning: rank %d: the flight record is not written: %s is not a "
                   "directory this rank can create%s%s\n",
                   rank_, directory.c_str(), error ? ": " : "",
                   error ? error.message().c_str() : "");
      return {};
    }
    // Written beside, then renamed: a reader never sees half a record.
    const fs::path partial = directory / (".rank-" + std::to_string(rank_) + ".json.partial");
    {
      std::ofstream out(partial, std::ios::trunc);
      out << flight_recorder_->to_json(reason);
      if (!out) {
        std::fprintf(stderr, "zerotrain: warning: rank %d: cannot write the flight record %s\n",
                     rank_, partial.c_str());
        return {};
      }
    }
    fs::rename(partial, path, error);
    if (error) {
      std::fprintf(stderr, "zerotrain: warning: rank %d: cannot write the flight record %s: %s\n",
                   rank_, path.c_str(), error.message().c_str());
      return {};
    }
    std::fprintf(stderr, "zerotrain: rank %d: its last %zu collectives are in %s\n", rank_,
                 std::min<std::size_t>(flight_recorder_->capacity(),
                                       static_cast<std::size_t>(flight_recorder_->recorded())),
                 path.c_str());
    return path;
  } catch (...) {
    return {};
  }
}

std::string RankSession::publish_memory_profile(const RankProfile& profile) {
  if (!write_run_dir_) return "";
  return engine::publish_memory_profile(*store_, profile, config_, config_.run.dir, timeout_);
}

std::string RankSession::finish(const MemorySnapshot& after_first_step, const MemorySnapshot& end,
                                std::int64_t parameters) {
  ZT_CHECK(!finished_, "RankSession::finish called twice");
  std::string summary;
  if (write_run_dir_) {
    summary = publish_memory_report(
        *store_, {rank_, world_size_, &config_, parameters, device_->device().to_string()},
        after_first_step, end, std::filesystem::path(config_.run.dir) / "memory.json", timeout_);
  }
  finish_without_memory_report();
  return summary;
}

void RankSession::finish_without_memory_report() {
  ZT_CHECK(!finished_, "RankSession::finish called twice");
  finished_ = true;
  lanes_->lanes().control.barrier()->wait();
  if (rendezvous_) rendezvous_->finish(timeout_);
}

}  // namespace zt::engine
