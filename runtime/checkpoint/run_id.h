// The run id: which run a checkpoint belongs to (Note [Checkpoints belong to a run] in
// docs/ARCHITECTURE.md). A fresh start draws one; a resume adopts the one of the checkpoint it
// loads; run.dir/run_id keeps it for the next resume and for the launcher's restarts.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace zt::checkpoint {

// The file in run.dir, and the marker in an unfinished save (step-N.tmp), holding the id.
inline constexpr std::string_view kRunIdFileName = "run_id";
// 48 random bits: two 24-bit halves travel exactly through a float all-reduce.
inline constexpr int kRunIdBits = 48;

// A fresh id, 12 lowercase hex digits.
std::string new_run_id();
// The id as a number, if `text` is one (12 lowercase hex digits).
std::optional<std::uint64_t> run_id_value(std::string_view text);
std::string run_id_text(std::uint64_t value);

// The id run.dir/run_id holds; nullopt when there is none. Throws Error naming the file when
// it holds something else.
std::optional<std::string> read_run_id(const std::filesystem::path& run_dir);
// Writes run.dir/run_id (atomically). Throws IoError naming the file.
void write_run_id(const std::filesystem::path& run_dir, const std::string& id);

// Which run a checkpoint directory (step-N, step-N.tmp, step-N.replaced) belongs to: its
// manifest's run_id, else the marker an unfinished save holds; "" when it names none.
std::string owner_run_id(const std::filesystem::path& checkpoint);

}  // namespace zt::checkpoint
