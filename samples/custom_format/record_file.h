// The sample's own binary format, a file of fixed-size records:
//   offset 0   8 bytes  magic "ZTRECS01"
//   offset 8   u64      record count N
//   offset 16  u32      feature count D
//   offset 20  u32      class count C (labels are in [0, C))
//   offset 24  N records of D f32 features then one i32 label
// All little-endian (the byte order of the machines zerotrain runs on).
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace record_file {

inline constexpr char kMagic[8] = {'Z', 'T', 'R', 'E', 'C', 'S', '0', '1'};
inline constexpr std::size_t kHeaderBytes = 24;

struct Header {
  std::uint64_t records = 0;
  std::uint32_t features = 0;
  std::uint32_t classes = 0;

  std::size_t record_bytes() const { return features * sizeof(float) + sizeof(std::int32_t); }
};

struct Contents {
  Header header;
  std::vector<float> features;       // (records, features)
  std::vector<std::int32_t> labels;  // (records)
};

// Writes `contents` to `path`; throws zerotrain::IoError naming the file when it cannot.
void write(const std::filesystem::path& path, const Contents& contents);

// Reads and checks a whole file; throws zerotrain::IoError when it cannot be read and
// zerotrain::FormatError naming the file for a wrong magic, a header out of range, a
// truncated (or overlong) body, or a label outside [0, classes).
Contents read(const std::filesystem::path& path);

}  // namespace record_file
