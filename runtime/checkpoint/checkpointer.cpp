// Saving in the background, committing when every rank is done, and loading with resharding.
#include "runtime/checkpoint/checkpointer.h"

#include <algorithm>
#include <cstdio>
#include <exception>

#include "core/config/byte_size.h"
#include "core/config/config_enums.h"
#include "core/config/config_loader.h"
#include "core/config/config_writer.h"
#include "core/error.h"
#include "data/safe_file.h"
#include "optim/lr_schedule_warnings.h"
#include "runtime/checkpoint/checkpoint_directory.h"
#include "runtime/checkpoint/checkpoint_reader.h"
#include "runtime/checkpoint/run_id.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

std::string describe(const ManifestParameter& p) {
  return "'" + p.name + "' " + p.shape_text() + " at element " + std::to_string(p.offset);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Host buffers for `tensors` state tensors of a shard of `numel` elements, not zeroed
// (whoever fills them writes every element).
std::vector<HostFloats> host_tensors(std::size_t tensors, std::int64_t numel) {
  std::vector<HostFloats> buffers;
  for (std::size_t t = 0; t < tensors; ++t) {
    buffers.push_back(HostFloats::uninitialized(static_cast<std::size_t>(numel)));
  }
  return buffers;
}

// A resume under another train.steps than the saving run's reshapes a decaying schedule:
// said once (by rank 0), unless nothing is left to train. The saving run's config is in
// the manifest (path is the checkpoint's); one this version cannot read says nothing.
void warn_of_schedule_change(const Config& config, const Manifest& manifest, const fs::path& path) {
  if (manifest.trainer.step >= config.train.steps) return;
  std::int64_t saved_steps = 0;
  try {
    saved_steps =
        parse_config_text(manifest.config_toml, (path / kManifestName).string(), {}).train.steps;
  } catch (const Error&) {
    return;
  }
  if (const auto warning = optim::resumed_schedule_warning(config, saved_steps)) {
    std::fprintf(stderr, "zerotrain: warning: %s\n", warning->c_str());
  }
}

// Note [Checkpoints belong to a run] (docs/ARCHITECTURE.md): the id of the checkpoint a
// resume by path loads (a new one when it has none), run.dir/run_id's for "latest" (a new one
// when the run keeps no run.dir or it holds none yet), a new one for a fresh start.
std::string rank0_run_id(const Config& config, const fs::path& run_dir) {
  const std::string& resume = config.checkpoint.resume;
  if (resume == "latest") {
    if (run_dir.empty()) return new_run_id();
    return read_run_id(run_dir).value_or(new_run_id());
  }
  if (!resume.empty()) {
    const std::string adopted = owner_run_id(resume);
    if (run_id_value(adopted)) return adopted;
  }
  return new_run_id();
}

}  // namespace

Checkpointer::Checkpointer(const Config& config, zero::ZeroStrategy& strategy, int optimizer_states,
                           int rank, int world_size, CheckpointerHooks hooks,
                           std::filesystem::path run_dir, bool weights_only)
    : config_(config),
      strategy_(strategy),
      state_count_(static_cast<std::size_t>(optimizer_states)),
      rank_(rank),
      world_size_(world_size),
      weights_only_(weights_only),
      hooks_(std::move(hooks)),
      directory_(checkpoint_directory(config)),
      run_dir_(std::move(run_dir)) {}

Checkpointer::~Checkpointer() = default;  // the writer waits for a write in flight

Manifest Checkpointer::manifest_for(const TrainerState& state) const {
  Manifest m;
  m.trainer = state;
  // The files' world: the ranks that wrote (one group's under hybrid sharding), which is
  // the world a reader reshards from.
  m.world_size = strategy_.checkpoint_files(world_size_);
  m.zero_stage = static_cast<int>(config_.zero.stage);
  m.precision = std::string(config_name(config_.precision.dtype));
  m.optimizer = std::string(config_name(config_.optimizer.type));
  m.offload = std::string(config_name(config_.offload.optimizer));
  m.state_names = state_names(m.optimizer, static_cast<int>(state_count_));
  for (const std::string& extra : strategy_.extra_state_names()) m.state_names.push_back(extra);
  m.parameters = describe_parameters(strategy_.layout());
  m.numel = strategy_.layout().numel;
  m.global_batch_size = config_.train.global_batch_size;
  m.seed = config_.run.seed;
  m.run_id = run_id_;
  m.config_toml = config_to_toml(config_);
  return m;
}

void Checkpointer::after_step(const TrainerState& state) {
  if (pending_) settle_save(false);
  const std::int64_t every = config_.checkpoint.every_steps;
  if (every <= 0) return;
  const bool last = state.step == config_.train.steps;
  if (state.step % every != 0 && !last) return;
  if (pending_) settle_save(true);  // one save in flight at a time
  start_save(state);
  // After the last step nothing follows to overlap with: the run ends with it committed.
  if (last) settle_save(true);
}

void Checkpointer::finish() {
  if (pending_) settle_save(true);
}

void Checkpointer::save_now(const TrainerState& state) {
  if (pending_) settle_save(true);
  start_save(state);
  settle_save(true);
}

void Checkpointer::decide_run_id() {
  std::string decided;
  std::exception_ptr error;
  if (rank_ == 0) {
    try {
      decided = rank0_run_id(config_, run_dir_);
    } catch (...) {
      error = std::current_exception();
    }
  }
  if (hooks_.agree_max({0, error ? 1.0f : 0.0f})[1] > 0) {
    if (error) std::rethrow_exception(error);
    throw Error("checkpoint: rank 0 could not decide the run id (its error is above)");
  }
  // Rank 0's id in two 24-bit halves, which floats hold exactly; the other ranks add zeros.
  constexpr int kHalfBits = kRunIdBits / 2;
  constexpr std::uint64_t kHalfMask = (std::uint64_t{1} << kHalfBits) - 1;
  const std::uint64_t value = rank_ == 0 ? run_id_value(decided).value() : 0;
  const std::array<float, 2> halves = hooks_.agree_max(
      {static_cast<float>(value >> kHalfBits), static_cast<float>(value & kHalfMask)});
  run_id_ = run_id_text((static_cast<std::uint64_t>(halves[0]) << kHalfBits) |
                        static_cast<std::uint64_t>(halves[1]));
  if (rank_ != 0) return;
  const std::vector<std::string> others = other_runs(directory_, run_id_);
  if (others.empty()) return;
  std::string list;
  for (const std::string& other : others) list += (list.empty() ? "" : "; ") + other;
  std::fprintf(stderr,
               "zerotrain: warning: checkpoint.dir %s holds checkpoints of another run: %s. This "
               "run (run id '%s') neither resumes from nor removes them, and stops rather than "
               "replace one at a step it saves too\n",
               data::quoted_path(directory_).c_str(), list.c_str(), run_id_.c_str());
}

void Checkpointer::start_save(const TrainerState& state) {
  if (run_id_.empty()) decide_run_id();
  const auto started = std::chrono::steady_clock::now();
  fs::path partial = directory_ / (step_directory_name(state.step) + std::string(kPartialSuffix));
  // Rank 0 empties the directory before any rank writes into it; a failure there is every
  // rank's to see.
  float failed = 0;
  std::exception_ptr error;
  if (rank_ == 0) {
    try {
      partial = prepare_partial(directory_, state.step, run_id_);
    } catch (...) {
      error = std::current_exception();
      failed = 1;
    }
  }
  if (hooks_.agree_max({0, failed})[1] > 0) {
    if (error) std::rethrow_exception(error);
    throw Error("checkpoint save after step " + std::to_string(state.step) +
                ": rank 0 could not prepare " + data::quoted_path(partial));
  }
  const std::optional<int> file = strategy_.checkpoint_file(rank_);
  if (!file) {
    // This rank's states are copies of another's (hybrid sharding): it writes nothing, and
    // only takes part in agreeing when the save is done.
    pending_ = Pending{state, partial, started, seconds_since(started), true, nullptr};
    return;
  }
  const zero::StateShard shard = strategy_.state_shard();
  ShardWrite write;
  write.directory = partial;
  write.header.rank = static_cast<std::uint32_t>(*file);
  write.header.world_size = static_cast<std::uint32_t>(strategy_.checkpoint_files(world_size_));
  write.header.step = state.step;
  write.header.shard_numel = shard.numel;
  write.header.run_count = static_cast<std::int64_t>(shard.runs.size());
  write.runs = shard.runs;
  const std::size_t state_tensors = 1 + state_count_ + strategy_.extra_state_names().size();
  write.header.tensors = static_cast<std::uint32_t>(state_tensors);
  write.tensors = host_tensors(state_tensors, shard.numel);
  std::vector<float*> out;
  for (HostFloats& tensor : write.tensors) out.push_back(tensor.data.get());
  strategy_.export_states(out);
  if (hooks_.at_phase) hooks_.at_phase(state.step, "save-staged");
  const std::int64_t step = state.step;
  write.on_phase = [this, step](std::string_view phase) {
    if (hooks_.at_phase) hooks_.at_phase(step, phase);
  };
  writer_.start(std::move(write));
  pending_ = Pending{state, partial, started, seconds_since(started), false, nullptr};
}

void Checkpointer::settle_save(bool wait) {
  Pending& pending = *pending_;
  if (!pending.collected && (wait || writer_.finished())) {
    try {
      writer_.wait();
    } catch (...) {
      pending.error = std::current_exception();
    }
    pending.collected = true;
  }
  const std::array<float, 2> agreed =
      hooks_.agree_max({pending.collected ? 0.0f : 1.0f, pending.error ? 1.0f : 0.0f});
  if (agreed[1] > 0) {
    const std::exception_ptr error = pending.error;
    const std::int64_t step = pending.state.step;
    pending_.reset();
    if (error) std::rethrow_exception(error);
    throw Error("checkpoint save after step " + std::to_string(step) +
                " failed on another rank (its error is above); the complete checkpoints in " +
                data::quoted_path(directory_) + " are untouched");
  }
  if (agreed[0] > 0) return;  // a rank is still writing: ask again after the next step
  commit();
}

void Checkpointer::commit() {
  const Pending pending = *pending_;
  pending_.reset();
  std::exception_ptr error;
  if (rank_ == 0) {
    try {
      Manifest manifest = manifest_for(pending.state);
      const int files = manifest.world_size;
      std::uint64_t bytes = 0;
      for (int r = 0; r < files; ++r) {
        manifest.files.push_back(read_done_record(pending.partial, r, files));
        bytes += manifest.files.back().bytes;
      }
      std::error_code ec;
      for (int r = 0; r < files; ++r) {
        fs::remove(pending.partial / (rank_file_name(r, files) + ".done"), ec);
      }
      const std::int64_t step = pending.state.step;
      const fs::path saved = commit_partial(pending.partial, step, manifest_to_toml(manifest),
                                            [this, step](std::string_view phase) {
                                              if (hooks_.at_phase) hooks_.at_phase(step, phase);
                                            });
      const std::vector<fs::path> removed =
          prune_checkpoints(directory_, config_.checkpoint.keep_last, run_id_);
      std::fprintf(stderr,
                   "zerotrain: checkpoint %s saved: %d file%s, %s; training waited %.3f s for "
                   "the host copy, the files took %.3f s%s\n",
                   data::quoted_path(saved).c_str(), files, files == 1 ? "" : "s",
                   format_approximate_bytes(static_cast<std::int64_t>(bytes)).c_str(),
                   pending.staging_seconds, seconds_since(pending.started),
                   removed.empty() ? ""
                                   : ("; removed " + std::to_string(removed.size()) +
                                      " older (checkpoint.keep_last)")
                                         .c_str());
    } catch (...) {
      error = std::current_exception();
    }
  }
  if (hooks_.agree_max({0, error ? 1.0f : 0.0f})[1] > 0) {
    if (error) std::rethrow_exception(error);
    throw Error("checkpoint save after step " + std::to_string(pending.state.step) +
                ": rank 0 could not commit it (its error is above)");
  }
}

std::optional<TrainerState> Checkpointer::load() {
  decide_run_id();
  const std::optional<fs::path> path = resolve_resume(config_, run_id_, rank_ == 0);
  // Every rank must make the same choice (checkpoint.dir is shared storage).
  const std::array<float, 2> found = hooks_.agree_max({path ? 1.0f : 0.0f, path ? 0.0f : 1.0f});
  if (found[0] > 0 && found[1] > 0) {
    throw Error("checkpoint.resume: some ranks found a checkpoint in " +
                data::quoted_path(directory_) +
                " and some did not; with several nodes checkpoint.dir must be storage every "
                "node shares");
  }
  if (!path) return std::nullopt;
  const auto started = std::chrono::steady_clock::now();
  const zero::StateShard shard = strategy_.load_shard();
  std::vector<HostFloats> tensors;
  std::optional<Manifest> manifest;
  std::exception_ptr error;
  try {
    const CheckpointReader reader(*path);
    check_fits(reader.manifest(), *path);
    const std::vector<int> ranks = reader.ranks_holding(shard.runs);
    reader.verify(ranks);  // every file this rank reads from, whole
    // The masters and the optimizer's states, and what this strategy saves beyond them when
    // the checkpoint has it too (overlap_step's parameters in use).
    std::size_t wanted = 1 + state_count_;
    const std::vector<std::string> extras = strategy_.extra_state_names();
    const std::vector<std::string>& names = reader.manifest().state_names;
    if (!extras.empty() && names.size() == wanted + extras.size() &&
        std::equal(extras.begin(), extras.end(),
                   names.begin() + static_cast<std::ptrdiff_t>(wanted))) {
      wanted += extras.size();
    }
    tensors = host_tensors(wanted, shard.numel);
    std::vector<float*> out;
    for (HostFloats& tensor : tensors) out.push_back(tensor.data.get());
    reader.read_shard(shard, out);  // padding zeroed
    manifest = reader.manifest();
  } catch (...) {
    error = std::current_exception();
  }
  // Nothing is imported unless every rank read its part.
  if (hooks_.agree_max({0, error ? 1.0f : 0.0f})[1] > 0) {
    if (error) std::rethrow_exception(error);
    throw Error("checkpoint.resume: another rank could not load " + data::quoted_path(*path) +
                " (its error is above)");
  }
  std::vector<const float*> in;
  for (const HostFloats& tensor : tensors) in.push_back(tensor.data.get());
  strategy_.import_states(in);
  if (rank_ == 0) {
    std::fprintf(stderr,
                 "zerotrain: resumed from %s: step %lld, saved by %d rank%s at zero.stage %d "
                 "(offload.optimizer %s); loaded in %.3f s\n",
                 data::quoted_path(*path).c_str(), static_cast<long long>(manifest->trainer.step),
                 manifest->world_size, manifest->world_size == 1 ? "" : "s", manifest->zero_stage,
                 manifest->offload.c_str(), seconds_since(started));
    warn_of_schedule_change(config_, *manifest, *path);
  }
  return manifest->trainer;
}

void Checkpointer::check_fits(const Manifest& m, const fs::path& path) const {
  const std::string where = "checkpoint " + data::quoted_path(path);
  const std::vector<ManifestParameter> ours = describe_parameters(strategy_.layout());
  const std::string hint =
      " (the checkpoint's own config is in its manifest.toml; the model must be the same)";
  if (m.parameters.size() != ours.size()) {
    throw Error(where + " was saved from another model: it has " +
                std::to_string(m.parameters.size()) + " parameters, this model has " +
                std::to_string(ours.size()) + hint);
  }
  for (std::size_t i = 0; i < ours.size(); ++i) {
    if (!(m.parameters[i] == ours[i])) {
      throw Error(where + " was saved from another model: its parameter " + std::to_string(i) +
                  " is " + describe(m.parameters[i]) + ", this model's is " + describe(ours[i]) +
                  hint);
    }
  }
  if (m.numel != strategy_.layout().numel) {
    throw Error(where + " holds " + std::to_string(m.numel) + " elements, this model has " +
                std::to_string(strategy_.layout().numel));
  }
  const std::string optimizer(config_name(config_.optimizer.type));
  const std::vector<std::string> expected = state_names(optimizer, static_cast<int>(state_count_));
  const bool states_match =
      m.state_names.size() >= expected.size() &&
      std::equal(expected.begin(), expected.end(), m.state_names.begin()) &&
      (m.state_names.size() == expected.size() || (m.state_names.size() == expected.size() + 1 &&
                                                   m.state_names.back() == zero::kParametersInUse));
  if (m.optimizer != optimizer || !states_match) {
    throw Error(where_set(config_, "optimizer.type") + ": optimizer.type = \"" + optimizer +
                "\" keeps " + std::to_string(state_count_) + " state(s) per parameter; " + where +
                " was saved by \"" + m.optimizer + "\" (its tensors: " +
                [&] {
                  std::string list;
                  for (const std::string& n : m.state_names) list += (list.empty() ? "" : ", ") + n;
                  return list;
                }() +
                "); resume with the same optimizer");
  }
  if (!weights_only_ && m.global_batch_size != config_.train.global_batch_size) {
    throw Error(where_set(config_, "train.global_batch_size") + ": the global batch is " +
                std::to_string(config_.train.global_batch_size) + " samples, but " + where +
                " was trained with " + std::to_string(m.global_batch_size) +
                " (the data position is step x global batch); set train.global_batch_size = " +
                std::to_string(m.global_batch_size) +
                " and micro_batch_size / grad_accum_steps to fit this world size");
  }
}

}  // namespace zt::checkpoint
