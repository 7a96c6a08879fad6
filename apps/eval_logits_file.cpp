// The .npy of `eval --logits`, written by every rank and put together by rank 0 (Note [Logits
// of several ranks]).
#include "apps/eval_logits_file.h"

#include <algorithm>
#include <string>
#include <system_error>

#include "core/error.h"
#include "data/distributed_sampler.h"
#include "data/npy_header.h"

namespace zt::apps {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kCopyChunkBytes = std::size_t{64} << 20;

}  // namespace

EvalLogitsFile::EvalLogitsFile(fs::path path, data::ExistingOutput existing, int rank,
                               int world_size, std::int64_t windows, std::int64_t columns)
    : path_(std::move(path)),
      existing_(existing),
      rank_(rank),
      world_size_(world_size),
      windows_(windows),
      columns_(columns) {
  const data::SampleRange share = data::even_share(windows, world_size, rank);
  share_end_ = share.first + share.count;
  written_ = share.first;
  data::check_replaceable_output(path_, "logits file", std::nullopt, existing_);
  if (rank_ == 0) {
    file_ = std::make_unique<data::AtomicOutputFile>(path_, "logits file", std::nullopt, existing_);
  } else if (share.count > 0) {
    file_ = std::make_unique<data::AtomicOutputFile>(part_path(rank_), "logits part");
  }
}

EvalLogitsFile::~EvalLogitsFile() = default;

fs::path EvalLogitsFile::part_path(int rank) const {
  fs::path part = path_;
  part += ".rank-" + std::to_string(rank) + ".part";
  return part;
}

void EvalLogitsFile::write(const engine::ValidationOutputs& outputs) {
  ZT_CHECK(file_ != nullptr && outputs.first_window == written_ &&
               outputs.first_window + outputs.windows <= share_end_,
           "validation outputs come in order, within this rank's share");
  const std::int64_t row = outputs.window_shape.empty() ? 1 : outputs.window_shape.back();
  const std::int64_t kept = columns_ > 0 ? std::min(columns_, row) : row;
  std::int64_t per_window = 1;
  for (const std::int64_t extent : outputs.window_shape) per_window *= extent;
  const std::int64_t kept_per_window = per_window / row * kept;
  if (window_values_ == 0) {
    window_values_ = kept_per_window;
    shape_ = {windows_};
    shape_.insert(shape_.end(), outputs.window_shape.begin(), outputs.window_shape.end());
    if (!outputs.window_shape.empty()) shape_.back() = kept;
    if (rank_ == 0) {
      const std::string header = data::npy_f32_header(shape_);
      file_->write(header.data(), header.size());
      offset_ = header.size();
    }
  }
  ZT_CHECK(kept_per_window == window_values_, "every window has the same shape");
  std::vector<float> values;
  const float* data = outputs.values.data();
  std::size_t count = outputs.values.size();
  if (kept < row) {
    const std::int64_t rows = static_cast<std::int64_t>(outputs.values.size()) / row;
    values.resize(static_cast<std::size_t>(rows * kept));
    for (std::int64_t r = 0; r < rows; ++r) {
      std::copy_n(outputs.values.data() + r * row, kept, values.data() + r * kept);
    }
    data = values.data();
    count = values.size();
  }
  file_->write(data, count * sizeof(float));
  written_ += outputs.windows;
  if (rank_ != 0 && written_ == share_end_) file_->commit();
}

void EvalLogitsFile::finish() {
  if (rank_ != 0) return;
  const std::uint64_t window_bytes = static_cast<std::uint64_t>(window_values_) * sizeof(float);
  std::vector<char> buffer;
  for (int rank = 1; rank < world_size_; ++rank) {
    const data::SampleRange share = data::even_share(windows_, world_size_, rank);
    if (share.count == 0) continue;
    const fs::path part = part_path(rank);
    const data::InputFile input = data::InputFile::open(
        part, "logits part",
        "each rank writes its part beside the file: with ranks on several nodes, --logits must "
        "name a filesystem they all share");
    const std::uint64_t expected = window_bytes * static_cast<std::uint64_t>(share.count);
    if (input.size_bytes() != expected) {
      throw IoError("logits part " + data::quoted_path(part) + " holds " +
                    std::to_string(input.size_bytes()) + " bytes, not the " +
                    std::to_string(expected) + " of rank " + std::to_string(rank) + "'s " +
                    std::to_string(share.count) + " windows");
    }
    for (std::uint64_t at = 0; at < expected; at += kCopyChunkBytes) {
      const auto bytes =
          static_cast<std::size_t>(std::min<std::uint64_t>(kCopyChunkBytes, expected - at));
      buffer.resize(bytes);
      input.read_at(at, buffer.data(), bytes);
      file_->write(buffer.data(), bytes);
    }
  }
  file_->commit();
  for (int rank = 1; rank < world_size_; ++rank) {
    std::error_code ec;
    fs::remove(part_path(rank), ec);  // best effort: the file is whole without them
  }
}

}  // namespace zt::apps
