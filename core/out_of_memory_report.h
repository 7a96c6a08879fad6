// The text of an out-of-memory error: a first line saying what failed, then a few short
// lines (what is in use per category, the allocator's view, the largest live allocations as
// a table) and what to try. MemoryTracker gathers the facts; this file only lays them out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/device/device_allocator.h"
#include "core/memory_tracker.h"

namespace zt {

struct LiveAllocationRow {
  std::int64_t bytes = 0;
  MemoryCategory category = MemoryCategory::kWorkspace;
  std::string name;   // the ScopedAllocationName it was made under ("" if none)
  std::string phase;  // the phase it was made in
};

struct OutOfMemoryReport {
  // What failed, without the bytes in use: "out of memory on cuda:0: allocating 3 MiB of
  // gradients during 'backward block 2' would exceed the device capacity of 64 MiB (...)".
  std::string headline;
  CategoryBytes current_bytes{};
  std::int64_t total_current_bytes = 0;
  AllocatorStats allocator;
  bool process_host_allocator = false;     // the allocator serves every rank of the process
  std::vector<LiveAllocationRow> largest;  // largest first
  std::vector<std::string> advice;         // each a line of its own, last
};

// A size to read at a glance: exact when a whole number of its unit ("600 KiB", "64 MiB"),
// else three significant figures ("12.1 MiB", not "12389 KiB").
std::string readable_bytes(std::int64_t bytes);

// The lines continuing the headline are indented by two spaces, so that the launcher keeps
// them with the error line (runtime/launch/output_relay.h). No trailing newline.
std::string format_out_of_memory_report(const OutOfMemoryReport& report);

}  // namespace zt
