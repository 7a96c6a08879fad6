// Lays out an out-of-memory report: the headline with the bytes in use, then per-category
// use, the allocator's blocks, a table of the largest live allocations and the advice.
#include "core/out_of_memory_report.h"

#include <algorithm>
#include <cstddef>

#include "core/config/byte_size.h"

namespace zt {
namespace {

std::string padded_right(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string padded_left(std::string text, std::size_t width) {
  if (text.size() < width) text.insert(0, width - text.size(), ' ');
  return text;
}

// "  in use: parameters 12.1 MiB, gradients 12.1 MiB" (categories holding nothing left out).
std::string in_use_line(const OutOfMemoryReport& report) {
  std::string line = "  in use:";
  bool any = false;
  for (std::size_t i = 0; i < kMemoryCategoryCount; ++i) {
    if (report.current_bytes[i] == 0) continue;
    line += std::string(any ? ", " : " ") +
            std::string(memory_category_name(static_cast<MemoryCategory>(i))) + " " +
            readable_bytes(report.current_bytes[i]);
    any = true;
  }
  return any ? line : line + " nothing";
}

// A caching allocator can hold room the categories do not show, and a large request can
// fail while small blocks are free: say both. The host allocator serves every rank of the
// process (ranks as threads), so its figures may include other ranks' blocks.
std::string allocator_line(const OutOfMemoryReport& report) {
  const AllocatorStats& stats = report.allocator;
  std::string line =
      std::string(report.process_host_allocator ? "  The process's host allocator holds "
                                                : "  The allocator holds ") +
      readable_bytes(stats.reserved_bytes) + " (" + readable_bytes(stats.allocated_bytes) + " in " +
      std::to_string(stats.allocations) + " blocks in use)";
  for (std::size_t i = 0; i < stats.largest_allocated_blocks.size(); ++i) {
    line += (i == 0 ? "; largest blocks in use: " : ", ") +
            readable_bytes(stats.largest_allocated_blocks[i]);
  }
  return line + ".";
}

// The largest live allocations, one row each under a header:
//       size  category          name                        made during
//   12.1 MiB  optimizer_states  model states (ZeRO shards)  initialization
std::string largest_table(const std::vector<LiveAllocationRow>& rows) {
  std::vector<std::string> sizes;
  std::size_t size_width = 4;      // "size"
  std::size_t category_width = 8;  // "category"
  std::size_t name_width = 4;      // "name"
  for (const LiveAllocationRow& row : rows) {
    sizes.push_back(readable_bytes(row.bytes));
    size_width = std::max(size_width, sizes.back().size());
    category_width = std::max(category_width, memory_category_name(row.category).size());
    name_width = std::max(name_width, row.name.empty() ? 1 : row.name.size());
  }
  const auto line = [&](std::string size, std::string category, std::string name,
                        const std::string& phase) {
    return "\n    " + padded_left(std::move(size), size_width) + "  " +
           padded_right(std::move(category), category_width) + "  " +
           padded_right(std::move(name), name_width) + "  " + phase;
  };
  std::string text = "\n  largest live allocations:";
  text += line("size", "category", "name", "made during");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const LiveAllocationRow& row = rows[i];
    text += line(sizes[i], std::string(memory_category_name(row.category)),
                 row.name.empty() ? "-" : row.name, row.phase.empty() ? "-" : row.phase);
  }
  return text;
}

}  // namespace

std::string readable_bytes(std::int64_t bytes) {
  static const char* const kUnitNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::int64_t unit_bytes = 1;
  std::size_t unit = 0;
  while (bytes / 1024 >= unit_bytes && unit + 1 < std::size(kUnitNames)) {
    unit_bytes *= 1024;
    ++unit;
  }
  if (bytes % unit_bytes != 0) return format_approximate_bytes(bytes);
  return std::to_string(bytes / unit_bytes) + " " + kUnitNames[unit];
}

std::string format_out_of_memory_report(const OutOfMemoryReport& report) {
  std::string text = report.headline + "; " + readable_bytes(report.total_current_bytes) +
                     " in use.\n" + in_use_line(report) + "\n" + allocator_line(report);
  if (!report.largest.empty()) text += largest_table(report.largest);
  for (const std::string& advice : report.advice) text += "\n  " + advice;
  return text;
}

}  // namespace zt
