// The zerotrain command line: dispatches to the subcommands and maps errors to exit codes.
#include <cstdio>
#include <exception>
#include <string>

#include "core/error.h"

int main(int argc, char** argv) {
  try {
    if (argc < 2) throw zt::UsageError("no command given; see `zerotrain --help`");
    throw zt::UsageError("unknown command '" + std::string(argv[1]) + "'");
  } catch (const zt::Error& e) {
    std::fprintf(stderr, "zerotrain: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zerotrain: error: %s\n", e.what());
    return zt::kExitRuntime;
  }
}
