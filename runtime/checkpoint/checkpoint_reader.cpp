// Opening, verifying and reading a checkpoint.
#include "runtime/checkpoint/checkpoint_reader.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/crc32c.h"
#include "core/error.h"
#include "data/safe_file.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

std::string read_manifest_text(const fs::path& path) {
  data::InputFile file = data::InputFile::open(path, "checkpoint manifest",
                                               "a complete checkpoint has one; is this a "
                                               "checkpoint's step-N directory?");
  std::string text(file.size_bytes(), '\0');
  if (!text.empty()) file.read_at(0, text.data(), text.size());
  return text;
}

}  // namespace

CheckpointReader::CheckpointReader(fs::path path) : path_(std::move(path)) {
  std::error_code ec;
  if (!fs::is_directory(path_, ec)) {
    throw IoError("checkpoint " + data::quoted_path(path_) +
                  (fs::exists(path_, ec) ? " is not a directory" : " does not exist") +
                  "; pass a checkpoint's step-N directory");
  }
  const fs::path manifest_path = path_ / kManifestName;
  manifest_ = parse_manifest(read_manifest_text(manifest_path), manifest_path.string());
  const int tensors = static_cast<int>(manifest_.state_names.size());
  for (const ManifestFile& entry : manifest_.files) {
    const fs::path file_path = path_ / entry.name;
    files_.push_back(data::InputFile::open(file_path, "checkpoint shard",
                                           "the manifest lists it: the checkpoint is incomplete "
                                           "(was a file removed?)"));
    const data::InputFile& file = files_.back();
    if (file.size_bytes() != entry.bytes) {
      throw Error("checkpoint shard " + data::quoted_path(file_path) + " has " +
                  std::to_string(file.size_bytes()) + " bytes, but the manifest says " +
                  std::to_string(entry.bytes) + ": it is truncated or damaged");
    }
    RankFileHeader header;
    if (entry.bytes < sizeof(header)) {
      throw Error("checkpoint shard " + data::quoted_path(file_path) +
                  " is too short for its header");
    }
    files_.back().read_at(0, &header, sizeof(header));
    const RankFileHeader expected;
    const bool matches =
        std::memcmp(header.magic, expected.magic, sizeof(header.magic)) == 0 &&
        header.version == expected.version &&
        header.rank == static_cast<std::uint32_t>(entry.rank) &&
        header.world_size == static_cast<std::uint32_t>(manifest_.world_size) &&
        header.tensors == static_cast<std::uint32_t>(tensors) &&
        header.step == manifest_.trainer.step && header.shard_numel >= 0 && header.run_count >= 0 &&
        rank_file_bytes(header.run_count, header.shard_numel, tensors) == entry.bytes;
    if (!matches) {
      throw Error("checkpoint shard " + data::quoted_path(file_path) +
                  " does not match its manifest (header: rank " + std::to_string(header.rank) +
                  " of " + std::to_string(header.world_size) + ", step " +
                  std::to_string(header.step) +
                  "): it is damaged or comes from another checkpoint");
    }
    headers_.push_back(header);
    for (const zero::StateRun& run : read_runs(entry.rank, header)) {
      index_.push_back(IndexedRun{run, entry.rank});
    }
  }
  std::sort(index_.begin(), index_.end(),
            [](const IndexedRun& a, const IndexedRun& b) { return a.run.begin < b.run.begin; });
  std::int64_t next = 0;
  for (const IndexedRun& indexed : index_) {
    if (indexed.run.begin != next) {
      throw Error(
          "checkpoint " + data::quoted_path(path_) + ": model elements " + std::to_string(next) +
          ".. are " + (indexed.run.begin < next ? "in two files" : "in no file") + " (at " +
          file_path(indexed.rank).filename().string() + "): the files do not belong together");
    }
    next += indexed.run.count;
  }
  if (next != manifest_.numel) {
    throw Error("checkpoint " + data::quoted_path(path_) + ": the files hold " +
                std::to_string(next) + " elements, the manifest says the model has " +
                std::to_string(manifest_.numel));
  }
}

fs::path CheckpointReader::file_path(int rank) const {
  return path_ / manifest_.files.at(static_cast<std::size_t>(rank)).name;
}

std::vector<zero::StateRun> CheckpointReader::read_runs(int rank,
                                                        const RankFileHeader& header) const {
  std::vector<std::int64_t> raw(static_cast<std::size_t>(header.run_count) * 3);
  if (!raw.empty()) {
    files_[static_cast<std::size_t>(rank)].read_at(sizeof(header), raw.data(), raw.size() * 8);
  }
  std::vector<zero::StateRun> runs;
  for (std::size_t i = 0; i < raw.size(); i += 3) {
    const zero::StateRun run{raw[i], raw[i + 1], raw[i + 2]};
    if (run.begin < 0 || run.count <= 0 || run.shard_offset < 0 ||
        run.shard_offset + run.count > header.shard_numel ||
        run.begin + run.count > manifest_.numel) {
      throw Error("checkpoint shard " + data::quoted_path(file_path(rank)) + ": run " +
                  std::to_string(i / 3) + " lies outside the shard or the model: it is damaged");
    }
    runs.push_back(run);
  }
  return runs;
}

void CheckpointReader::verify(std::span<const int> ranks) const {
  std::vector<int> all;
  if (ranks.empty()) {
    for (int r = 0; r < manifest_.world_size; ++r) all.push_back(r);
    ranks = all;
  }
  constexpr std::size_t kChunk = std::size_t{8} << 20;
  std::vector<std::byte> buffer(kChunk);
  for (const int rank : ranks) {
    const ManifestFile& entry = manifest_.files.at(static_cast<std::size_t>(rank));
    std::uint32_t crc = 0;
    for (std::uint64_t offset = 0; offset < entry.bytes; offset += kChunk) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, entry.bytes - offset));
      files_[static_cast<std::size_t>(rank)].read_at(offset, buffer.data(), n);
      crc = crc32c(std::span<const std::byte>(buffer.data(), n), crc);
    }
    if (crc != entry.crc32c) {
      std::ostringstream message;
      message << "checkpoint shard " << data::quoted_path(file_path(rank))
              << " is corrupt: its CRC-32C is " << std::hex << crc << ", the manifest says "
              << entry.crc32c << "; load an older checkpoint (checkpoint.resume = its path)";
      throw Error(message.str());
    }
  }
}

std::vector<int> CheckpointReader::ranks_holding(std::span<const zero::StateRun> runs) const {
  std::vector<bool> holds(static_cast<std::size_t>(manifest_.world_size), false);
  for (const zero::StateRun& run : runs) {
    auto it = std::upper_bound(index_.begin(), index_.end(), run.begin,
                               [](std::int64_t v, const IndexedRun& r) { return v < r.run.begin; });
    if (it != index_.begin()) --it;
    for (; it != index_.end() && it->run.begin < run.begin + run.count; ++it) {
      if (it->run.begin + it->run.count > run.begin)
        holds[static_cast<std::size_t>(it->rank)] = true;
    }
  }
  std::vector<int> ranks;
  for (int r = 0; r < manifest_.world_size; ++r) {
    if (holds[static_cast<std::size_t>(r)]) ranks.push_back(r);
  }
  return ranks;
}

void CheckpointReader::read(int tensor, std::int64_t begin, std::int64_t count, float* out) const {
  ZT_CHECK(tensor >= 0 && tensor < static_cast<int>(manifest_.state_names.size()) && begin >= 0 &&
               begin + count <= manifest_.numel,
           "CheckpointReader::read out of range");
  const std::int64_t end = begin + count;
  auto it = std::upper_bound(index_.begin(), index_.end(), begin,
                             [](std::int64_t v, const IndexedRun& r) { return v < r.run.begin; });
  if (it != index_.begin()) --it;
  for (; it != index_.end() && it->run.begin < end; ++it) {
    const zero::StateRun& run = it->run;
    const std::int64_t from = std::max(begin, run.begin);
    const std::int64_t to = std::min(end, run.begin + run.count);
    if (from >= to) continue;
    const RankFileHeader& header = headers_[static_cast<std::size_t>(it->rank)];
    const std::uint64_t offset =
        tensor_data_offset(header.run_count, header.shard_numel, tensor) +
        static_cast<std::uint64_t>(run.shard_offset + (from - run.begin)) * 4;
    files_[static_cast<std::size_t>(it->rank)].read_at(offset, out + (from - begin),
                                                       static_cast<std::size_t>(to - from) * 4);
  }
}

void CheckpointReader::read_shard(const zero::StateShard& shard,
                                  std::span<float* const> out) const {
  for (std::size_t t = 0; t < out.size(); ++t) {
    std::fill_n(out[t], shard.numel, 0.0f);
    for (const zero::StateRun& run : shard.runs) {
      read(static_cast<int>(t), run.begin, run.count, out[t] + run.shard_offset);
    }
  }
}

}  // namespace zt::checkpoint
