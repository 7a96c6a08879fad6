// Writing a rank's checkpoint file in the background.
#include "runtime/checkpoint/shard_writer.h"

#include <cstdio>
#include <fstream>
#include <span>

#include "core/crc32c.h"
#include "core/error.h"
#include "data/safe_file.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

// Writes `bytes` to `out` and folds them into `crc`.
void put(data::AtomicOutputFile& out, const void* bytes, std::size_t n, std::uint32_t& crc) {
  out.write(bytes, n);
  crc = crc32c(std::span<const std::byte>(static_cast<const std::byte*>(bytes), n), crc);
}

}  // namespace

ShardWriter::~ShardWriter() {
  if (thread_.joinable()) thread_.join();
}

void ShardWriter::start(ShardWrite write) {
  ZT_CHECK(!thread_.joinable(), "a checkpoint shard write is already in flight");
  finished_.store(false, std::memory_order_relaxed);
  error_ = nullptr;
  thread_ = std::thread([this, w = std::move(write)]() mutable {
    try {
      run(std::move(w));
    } catch (...) {
      error_ = std::current_exception();
    }
    finished_.store(true, std::memory_order_release);
  });
}

void ShardWriter::run(ShardWrite write) {
  const int rank = static_cast<int>(write.header.rank);
  const int world = static_cast<int>(write.header.world_size);
  const std::string name = rank_file_name(rank, world);
  data::AtomicOutputFile out(write.directory / name, "checkpoint shard");
  std::uint32_t crc = 0;
  std::uint64_t bytes = 0;
  put(out, &write.header, sizeof(write.header), crc);
  bytes += sizeof(write.header);
  std::vector<std::int64_t> raw;
  raw.reserve(write.runs.size() * 3);
  for (const zero::StateRun& run : write.runs) {
    raw.insert(raw.end(), {run.begin, run.count, run.shard_offset});
  }
  put(out, raw.data(), raw.size() * 8, crc);
  bytes += raw.size() * 8;
  // Bounded pieces: the write of a large shard is not one giant syscall, and the fault
  // injection finds a point half-way through.
  constexpr std::size_t kPieceFloats = std::size_t{4} << 20;
  std::uint64_t data_bytes = 0;
  for (const auto& tensor : write.tensors) data_bytes += tensor.size * 4;
  std::uint64_t written = 0;
  bool said_half = false;
  for (const auto& tensor : write.tensors) {
    for (std::size_t first = 0; first < tensor.size; first += kPieceFloats) {
      const std::size_t n = std::min(kPieceFloats, tensor.size - first);
      put(out, tensor.data.get() + first, n * 4, crc);
      written += n * 4;
      if (!said_half && written * 2 >= data_bytes && write.on_phase) {
        said_half = true;
        write.on_phase("save-writing");
      }
    }
  }
  bytes += written;
  out.commit();
  data::AtomicOutputFile done(write.directory / (name + ".done"), "checkpoint shard record");
  char record[64];
  const int length = std::snprintf(record, sizeof(record), "%llu %08x\n",
                                   static_cast<unsigned long long>(bytes), crc);
  done.write(record, static_cast<std::size_t>(length));
  done.commit();
  result_ = ManifestFile{name, rank, bytes, crc};
  if (write.on_phase) write.on_phase("save-written");
}

ManifestFile ShardWriter::wait() {
  ZT_CHECK(thread_.joinable(), "no checkpoint shard write to wait for");
  thread_.join();
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  return result_;
}

ManifestFile read_done_record(const fs::path& directory, int rank, int world_size) {
  const std::string name = rank_file_name(rank, world_size);
  const fs::path path = directory / (name + ".done");
  std::ifstream in(path);
  unsigned long long bytes = 0;
  std::string crc;
  if (!(in >> bytes >> crc)) {
    throw IoError("checkpoint save: rank " + std::to_string(rank) + "'s record '" + path.string() +
                  "' is missing or unreadable after every rank said it wrote "
                  "its shard; is checkpoint.dir on a filesystem every node shares?");
  }
  return ManifestFile{name, rank, bytes, static_cast<std::uint32_t>(std::stoul(crc, nullptr, 16))};
}

}  // namespace zt::checkpoint
