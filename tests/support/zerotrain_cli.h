// Running the built zerotrain binary from a test: a config of configs/ by name, the command in
// a temporary directory, and counting what its output holds.
#pragma once

#include <string>
#include <vector>

#include "support/program_run.h"
#include "support/temp_dir.h"
#include "support/test_paths.h"

namespace zt::testing {

inline std::string config_path(const std::string& name) {
  return zt::testing::source_dir() + "/configs/" + name;
}

// `zerotrain ARGS...` in `dir`, its output in dir/<name>.out and .err.
inline ProgramResult zerotrain(const TempDir& dir, std::vector<std::string> args,
                               const std::string& name = "run") {
  args.insert(args.begin(), zt::testing::zerotrain_binary());
  return run_program(args, dir.path(), name);
}

// How often `what` occurs in `text` (overlaps included).
inline std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace zt::testing
