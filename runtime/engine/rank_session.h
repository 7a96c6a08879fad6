// RankSession: this process's place in a training job. The rank the environment describes
// (zerotrain launch, torchrun-style variables, Slurm, Open MPI; one rank when none), run.dir
// (rank 0 claims it before connecting), the store the ranks meet on, the rank's device and
// its communication lanes. A Trainer runs on top; finish() leaves the job with every rank.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "comm/collective_check.h"
#include "comm/comm_lanes.h"
#include "comm/flight_recorder.h"
#include "comm/store/store.h"
#include "comm/topology.h"
#include "core/config/config.h"
#include "core/device/device_context.h"
#include "core/error.h"
#include "core/memory_tracker.h"
#include "runtime/engine/flight_dump_on_terminate.h"
#include "runtime/engine/flight_dump_signals.h"
#include "runtime/engine/memory_profile.h"
#include "runtime/engine/run_directory.h"

namespace zt::comm {
class MemoryStore;
}
namespace zt::launch {
class RendezvousStore;
}

namespace zt::engine {

class RankSession {
 public:
  // Joins the job (blocks until every rank has, within runtime.comm_timeout_s). With
  // `write_run_dir`, rank 0 claims run.dir first and finish() writes memory.json there.
  explicit RankSession(const Config& config, bool write_run_dir = true);
  ~RankSession();
  RankSession(const RankSession&) = delete;
  RankSession& operator=(const RankSession&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  int local_rank() const { return local_rank_; }
  int local_world_size() const { return local_world_size_; }
  // Every rank's node and local rank, as all ranks agreed at the rendezvous.
  const comm::Topology& topology() const { return topology_; }
  DeviceContext& device() { return *device_; }
  comm::CommLanes lanes() const { return lanes_->lanes(); }
  // run.dir as rank 0 claimed it; null on the other ranks.
  const RunDirectory* run_directory() const { return run_directory_.get(); }

  // Collective: every rank's memory entry (`after_first_step` and `end`) goes into
  // run.dir/memory.json (when writing run.dir), then the ranks leave together, so none tears down
  // its communicator while a peer still reads from it. Rank 0 returns the peak summary.
  // Memory-profiling mode, before finish(): every rank's profile through the store; rank 0
  // writes run.dir/memory/rank-K.json and run.dir/memory.html and returns the page's path.
  std::string publish_memory_profile(const RankProfile& profile);
  std::string finish(const MemorySnapshot& after_first_step, const MemorySnapshot& end,
                     std::int64_t parameters);
  // Collective: the ranks leave together as finish() has them, but run.dir/memory.json is
  // left as it is: a run that made no step (the resume of a finished run) has no figures of
  // its own, and the earlier run's are the ones worth keeping.
  void finish_without_memory_report();
  bool finished() const { return finished_; }

  // The rank's flight recorder: every op of its lanes and their splits (Note [The flight
  // recorder] in comm/flight_recorder.h).
  const comm::FlightRecorder& flight_recorder() const { return *flight_recorder_; }
  // Writes the flight recorder to run.dir/flight/rank-<rank>.json (atomically) with `reason`
  // and says so on stderr; returns the path, or empty (with a warning saying why) when it
  // cannot be written, or without `write_run_dir`. Never throws: it runs while another error
  // is on its way out. Besides a communication error (below), SIGUSR1, SIGTERM and SIGINT
  // write it (Note [Flight records on signals]), and with comm.dump_on_exit the session's
  // end does, unless a failure's record is already there.
  std::filesystem::path write_flight_record(const std::string& reason) const noexcept;

  // Collective, at the end of each optimizer step: with comm.check_collectives = "step", the
  // ranks compare the step's collectives on every communicator (Note [The collective check]
  // in comm/collective_check.h) and a mismatch throws CommError naming the group, the ranks
  // and each side's op. Otherwise nothing.
  void check_collectives_step() { collective_check_->end_step(); }

  // Runs `step`; a std::bad_alloc from memory outside the tracker gets the tracker's
  // explanation (what was live, what to try). A communication error (a collective that timed
  // out or failed, a peer gone) leaves the flight record in run.dir before it goes on.
  template <class Step>
  auto explained(Step&& step) {
    try {
      return step();
    } catch (const std::bad_alloc&) {
      throw device_->tracker().untracked_allocation_failed();
    } catch (const CommError& e) {
      if (!write_flight_record(e.what()).empty()) failure_recorded_ = true;
      throw;
    }
  }

 private:
  const Config config_;
  int rank_ = 0;
  int world_size_ = 1;
  int local_rank_ = 0;
  int local_world_size_ = 1;
  std::chrono::milliseconds timeout_{0};
  comm::Topology topology_ = comm::Topology::single_node(1);
  std::unique_ptr<RunDirectory> run_directory_;
  std::unique_ptr<launch::RendezvousStore> rendezvous_;
  std::unique_ptr<comm::MemoryStore> local_store_;
  comm::Store* store_ = nullptr;
  std::unique_ptr<DeviceContext> device_;
  std::shared_ptr<comm::FlightRecorder> flight_recorder_;    // the lanes record into it
  std::shared_ptr<comm::CollectiveCheck> collective_check_;  // the lanes are checked by it
  std::unique_ptr<comm::OwnedCommLanes> lanes_;
  std::unique_ptr<FlightDumpSignals> dump_signals_;           // null: another session holds them
  std::unique_ptr<FlightDumpOnTerminate> dump_on_terminate_;  // null: another session's
  mutable std::mutex flight_write_mutex_;                     // the signal thread writes too
  bool failure_recorded_ = false;  // a record with an error's reason is out
  bool write_run_dir_ = true;
  bool finished_ = false;
};

}  // namespace zt::engine
