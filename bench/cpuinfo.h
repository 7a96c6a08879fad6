// What /proc/cpuinfo says of this machine, for the benchmarks' headers (every figure names
// its CPU).
#pragma once

#include <fstream>
#include <string>
#include <string_view>

namespace zt::bench {

// The value of `key` on the first /proc/cpuinfo line that has it ("model name", "flags").
inline std::string cpuinfo_field(std::string_view key) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) return line.substr(colon + 2);
  }
  return "unknown";
}

}  // namespace zt::bench
