// CheckpointReader: one complete checkpoint opened for reading, at any world size. Opening
// checks what can be checked cheaply (the manifest parses; every rank file is there, a
// regular file of the size the manifest gives, with a header that matches; together the
// files' runs cover every element of the model once); verify() checks the checksums;
// read() gathers any range of the model's elements from whichever files hold them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "data/safe_file.h"
#include "runtime/checkpoint/checkpoint_format.h"

namespace zt::checkpoint {

class CheckpointReader {
 public:
  // `path`: a checkpoint's step-N directory. Throws Error (IoError for I/O) naming the file.
  explicit CheckpointReader(std::filesystem::path path);

  const Manifest& manifest() const { return manifest_; }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path file_path(int rank) const;
  // Streams the files of `ranks` (every file when empty) and compares each one's CRC-32C
  // with the manifest's; throws Error naming the first file that differs.
  void verify(std::span<const int> ranks = {}) const;
  // The ranks whose files hold any element of `runs`.
  std::vector<int> ranks_holding(std::span<const zero::StateRun> runs) const;
  // State tensor `tensor` (0 = masters) of model elements [begin, begin + count) into `out`.
  void read(int tensor, std::int64_t begin, std::int64_t count, float* out) const;
  // Every run of `shard`, each tensor into out[tensor] at the runs' shard offsets (the rest,
  // padding, zero; each out[tensor] holds shard.numel floats).
  void read_shard(const zero::StateShard& shard, std::span<float* const> out) const;

 private:
  struct IndexedRun {
    zero::StateRun run;
    int rank = 0;
  };
  std::vector<zero::StateRun> read_runs(int rank, const RankFileHeader& header) const;

  std::filesystem::path path_;
  Manifest manifest_;
  std::vector<data::InputFile> files_;   // by rank
  std::vector<RankFileHeader> headers_;  // by rank
  std::vector<IndexedRun> index_;        // every file's runs, by begin
};

}  // namespace zt::checkpoint
