// Reading and writing the record file, checking everything a damaged or foreign file could
// get wrong before a single sample reaches the engine.
#include "record_file.h"

#include <zerotrain/errors.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

namespace record_file {
namespace {

template <typename T>
void put(std::string& bytes, const T& value) {
  bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <typename T>
T get(const std::string& bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

}  // namespace

void write(const std::filesystem::path& path, const Contents& contents) {
  const Header& header = contents.header;
  std::string bytes(kMagic, sizeof kMagic);
  put(bytes, header.records);
  put(bytes, header.features);
  put(bytes, header.classes);
  for (std::uint64_t r = 0; r < header.records; ++r) {
    bytes.append(reinterpret_cast<const char*>(&contents.features[r * header.features]),
                 header.features * sizeof(float));
    put(bytes, contents.labels[r]);
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) throw zerotrain::IoError("cannot write record file '" + path.string() + "'");
}

Contents read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw zerotrain::IoError("cannot open record file '" + path.string() +
                             "': " + std::strerror(errno));
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string name = "record file '" + path.string() + "'";
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    throw zerotrain::FormatError(name + " does not start with the magic \"ZTRECS01\" (" +
                                 std::to_string(bytes.size()) +
                                 " bytes): not a record file; write one with --write");
  }
  Contents contents;
  Header& header = contents.header;
  header.records = get<std::uint64_t>(bytes, 8);
  header.features = get<std::uint32_t>(bytes, 16);
  header.classes = get<std::uint32_t>(bytes, 20);
  if (header.records == 0 || header.features == 0 || header.features > (1u << 20) ||
      header.classes < 2 || header.classes > (1u << 20)) {
    throw zerotrain::FormatError(name + ": header says " + std::to_string(header.records) +
                                 " records, " + std::to_string(header.features) + " features, " +
                                 std::to_string(header.classes) +
                                 " classes; expected records >= 1, 1 <= features <= 2^20 "
                                 "and 2 <= classes <= 2^20");
  }
  // Compared by division: records × record bytes may not fit in 64 bits.
  const std::uint64_t body_bytes = bytes.size() - kHeaderBytes;
  const bool truncated = header.records > body_bytes / header.record_bytes();
  if (truncated || body_bytes != header.records * header.record_bytes()) {
    throw zerotrain::FormatError(
        name + " is " + (truncated ? "truncated" : "too long") + ": its header promises " +
        std::to_string(header.records) + " records of " + std::to_string(header.record_bytes()) +
        " bytes after the " + std::to_string(kHeaderBytes) + "-byte header, but the file has " +
        std::to_string(bytes.size()) + " bytes");
  }
  contents.features.resize(header.records * header.features);
  contents.labels.resize(header.records);
  for (std::uint64_t r = 0; r < header.records; ++r) {
    const std::size_t at = kHeaderBytes + r * header.record_bytes();
    std::memcpy(&contents.features[r * header.features], bytes.data() + at,
                header.features * sizeof(float));
    const auto label = get<std::int32_t>(bytes, at + header.features * sizeof(float));
    if (label < 0 || static_cast<std::uint32_t>(label) >= header.classes) {
      throw zerotrain::FormatError(name + ": record " + std::to_string(r) + " has label " +
                                   std::to_string(label) + ", outside [0, " +
                                   std::to_string(header.classes) + ")");
    }
    contents.labels[r] = label;
  }
  return contents;
}

}  // namespace record_file
