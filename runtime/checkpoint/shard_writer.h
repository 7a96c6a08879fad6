// ShardWriter: writes one rank's checkpoint file on a thread of its own, so training goes on
// while the bytes reach the disk. One write at a time: the host copy it writes from is the
// only extra memory a save costs (Note [Checkpoint saving]).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "runtime/checkpoint/checkpoint_format.h"

namespace zt::checkpoint {

// Host floats a save copies a state tensor into: not zeroed first (every element is
// written by the copy), so the copy is the only pass over it before the write.
struct HostFloats {
  std::unique_ptr<float[]> data;
  std::size_t size = 0;
  static HostFloats uninitialized(std::size_t n) {
    return {std::make_unique_for_overwrite<float[]>(n), n};
  }
};

struct ShardWrite {
  std::filesystem::path directory;  // the checkpoint's .tmp directory
  RankFileHeader header;
  std::vector<zero::StateRun> runs;
  std::vector<HostFloats> tensors;  // each header.shard_numel floats
  // Called on the writing thread at "save-writing" (half the data written) and
  // "save-written" (the file durable under its name); the fault injection's hook.
  std::function<void(std::string_view phase)> on_phase;
};

class ShardWriter {
 public:
  ShardWriter() = default;
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;
  ~ShardWriter();  // waits for a write in flight

  // Starts writing `write` (none may be in flight). The file is written under a temporary
  // name, fsynced and renamed to rank_file_name(); then "<name>.done" records its size and
  // CRC-32C for the rank that commits the checkpoint.
  void start(ShardWrite write);
  bool in_flight() const { return thread_.joinable(); }
  // In flight and finished (well or not): wait() returns at once.
  bool finished() const { return in_flight() && finished_.load(std::memory_order_acquire); }
  // Waits for the write; returns its file's record, or rethrows why it failed.
  ManifestFile wait();

 private:
  void run(ShardWrite write);

  std::thread thread_;
  std::atomic<bool> finished_{false};
  ManifestFile result_;
  std::exception_ptr error_;
};

// The record "<name>.done" holds: "<bytes> <crc32c hex>".
ManifestFile read_done_record(const std::filesystem::path& directory, int rank, int world_size);

}  // namespace zt::checkpoint
