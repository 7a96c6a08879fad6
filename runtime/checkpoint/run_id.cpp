// Drawing, writing and reading run ids; which run a checkpoint directory belongs to.
#include "runtime/checkpoint/run_id.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>

#include "core/error.h"
#include "data/safe_file.h"
#include "runtime/checkpoint/checkpoint_format.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kRunIdDigits = kRunIdBits / 4;

// The file's text without a trailing newline; nullopt when it cannot be read.
std::optional<std::string> read_small_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace

std::string new_run_id() {
  std::random_device device;
  const std::uint64_t high = device();
  const std::uint64_t low = device();
  return run_id_text(((high << 32) | low) & ((std::uint64_t{1} << kRunIdBits) - 1));
}

std::optional<std::uint64_t> run_id_value(std::string_view text) {
  if (text.size() != kRunIdDigits) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    const bool digit = c >= '0' && c <= '9';
    if (!digit && !(c >= 'a' && c <= 'f')) return std::nullopt;
    value = value * 16 + static_cast<std::uint64_t>(digit ? c - '0' : c - 'a' + 10);
  }
  return value;
}

std::string run_id_text(std::uint64_t value) {
  char text[kRunIdDigits + 1] = {};
  std::snprintf(text, sizeof(text), "%012llx", static_cast<unsigned long long>(value));
  return text;
}

std::optional<std::string> read_run_id(const fs::path& run_dir) {
  const fs::path path = run_dir / kRunIdFileName;
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  const std::optional<std::string> text = read_small_file(path);
  if (!text || !run_id_value(*text)) {
    throw Error(data::quoted_path(path) + " does not hold a run id (" +
                std::to_string(kRunIdDigits) +
                " hex digits); remove it to start a new run, whose checkpoints "
                "checkpoint.resume = \"latest\" will then find");
  }
  return *text;
}

void write_run_id(const fs::path& run_dir, const std::string& id) {
  data::AtomicOutputFile file(run_dir / kRunIdFileName, "run id file");
  const std::string line = id + "\n";
  file.write(line.data(), line.size());
  file.commit();
}

std::string owner_run_id(const fs::path& checkpoint) {
  if (const std::optional<std::string> manifest = read_small_file(checkpoint / kManifestName)) {
    return manifest_run_id(*manifest);
  }
  const std::optional<std::string> marker = read_small_file(checkpoint / kRunIdFileName);
  return marker && run_id_value(*marker) ? *marker : "";
}

}  // namespace zt::checkpoint
