// Memory profile files: rank-K.json from a tracker timeline, and memory.html drawn as SVG.
#include "runtime/engine/memory_profile.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "core/config/byte_size.h"
#include "core/config/config_enums.h"
#include "core/error.h"
#include "runtime/engine/json_text.h"

namespace zt::engine {
namespace {

constexpr std::string_view kKeyPrefix = "zerotrain/memory_profile/";
// The chart keeps at most this many points per series: in each run of events it keeps the
// one with the highest total, so the peak is never dropped.
constexpr std::size_t kMaxChartPoints = 1500;
constexpr double kWidth = 960, kHeight = 300, kLeft = 70, kRight = 10, kTop = 10, kBottom = 30;
constexpr const char* kColors[kMemoryCategoryCount] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                       "#59a14f", "#edc948", "#b07aa1"};

struct Point {
  std::size_t event = 0;  // index into the events
  CategoryBytes bytes{};  // every category's live bytes after that event
  std::int64_t total = 0;
};

struct Peak {
  std::int64_t total = 0;
  std::string phase;
  std::int64_t step = 0;
  CategoryBytes bytes{};
};

// Every event's per-category bytes, rebuilt from each event's own category; the peak; and
// the chart's points.
struct Replay {
  std::vector<Point> points;
  Peak peak;
};

Replay replay(const std::vector<MemoryEvent>& events) {
  Replay result;
  CategoryBytes current{};
  const std::size_t per_point =
      std::max<std::size_t>(1, (events.size() + kMaxChartPoints - 1) / kMaxChartPoints);
  Point best;
  bool have_best = false;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const MemoryEvent& e = events[i];
    current[static_cast<std::size_t>(e.category)] = e.category_bytes;
    if (e.total_bytes > result.peak.total) {
      result.peak = {e.total_bytes, e.phase, e.step, current};
    }
    if (!have_best || e.total_bytes > best.total) {
      best = {i, current, e.total_bytes};
      have_best = true;
    }
    if ((i + 1) % per_point == 0 || i + 1 == events.size()) {
      result.points.push_back(best);
      have_best = false;
    }
  }
  return result;
}

// {"phases": [...], "names": [...], "events": [[...], ...], "peak": {...}}
std::string timeline_json(const std::vector<MemoryEvent>& events) {
  std::vector<std::string> phases, names;
  std::map<std::string, std::size_t> phase_index, name_index;
  const auto index_of = [](std::map<std::string, std::size_t>& index,
                           std::vector<std::string>& list, const std::string& text) {
    const auto [it, added] = index.emplace(text, list.size());
    if (added) list.push_back(text);
    return it->second;
  };
  std::string rows;
  char row[256];
  for (const MemoryEvent& e : events) {
    std::snprintf(row, sizeof(row), "%s\n  [%.6f, %lld, %zu, %zu, %lld, %lld, %lld, %zu]",
                  rows.empty() ? "" : ",", e.time_s, static_cast<long long>(e.step),
                  index_of(phase_index, phases, e.phase), static_cast<std::size_t>(e.category),
                  static_cast<long long>(e.delta_bytes), static_cast<long long>(e.category_bytes),
                  static_cast<long long>(e.total_bytes), index_of(name_index, names, e.name));
    rows += row;
  }
  const auto list_json = [](const std::vector<std::string>& list) {
    std::string json = "[";
    for (std::size_t i = 0; i < list.size(); ++i) json += (i ? ", " : "") + json_string(list[i]);
    return json + "]";
  };
  const Peak peak = replay(events).peak;
  std::string categories;
  for (std::size_t c = 0; c < kMemoryCategoryCount; ++c) {
    categories += std::string(c ? ", " : "") +
                  json_string(memory_category_name(static_cast<MemoryCategory>(c))) + ": " +
                  std::to_string(peak.bytes[c]);
  }
  return "{\"phases\": " + list_json(phases) + ", \"names\": " + list_json(names) +
         ",\n \"events\": [" + rows +
         "],\n \"peak\": {\"total_bytes\": " + std::to_string(peak.total) +
         ", \"phase\": " + json_string(peak.phase) + ", \"step\": " + std::to_string(peak.step) +
         ", \"categories\": {" + categories + "}}}";
}

double x_of(std::size_t event, std::size_t events) {
  return kLeft +
         (kWidth - kLeft - kRight) *
             (events > 1 ? static_cast<double>(event) / static_cast<double>(events - 1) : 0);
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

// What a phase is, for the x axis: its first word ("forward block 3" is "forward").
std::string_view phase_kind(std::string_view phase) { return phase.substr(0, phase.find(' ')); }

// Note [Step and phase marks]
// The x axis is event order, not time, so the reader needs to see where each step starts
// and what the rank was doing: a band per run of events of one kind of phase (forward,
// loss, backward, optimizer, ...), labelled along the bottom where it is wide enough, and
// a vertical line labelled "step K" at the first event of each step. Drawn under the
// areas, so the bands tint the background only.
std::string step_and_phase_marks(const std::vector<MemoryEvent>& events) {
  const std::size_t n = events.size();
  const double y_top = kTop, y_bottom = kHeight - kBottom;
  std::string svg;
  for (std::size_t start = 0; start < n;) {
    const std::string_view kind = phase_kind(events[start].phase);
    std::size_t end = start + 1;
    while (end < n && events[end].step == events[start].step &&
           phase_kind(events[end].phase) == kind) {
      ++end;
    }
    const double x0 = x_of(start, n), x1 = end < n ? x_of(end, n) : x_of(n - 1, n);
    const std::string label(kind.empty() ? "-" : kind);
    svg += "<g class=\"zt-phase\" data-phase=\"" + label + "\" data-step=\"" +
           std::to_string(events[start].step) + "\"><rect x=\"" + number(x0) + "\" y=\"" +
           number(y_top) + "\" width=\"" + number(std::max(x1 - x0, 0.5)) + "\" height=\"" +
           number(y_bottom - y_top) + "\" fill=\"" + (kind == "backward" ? "#eef" : "#f4f4f4") +
           "\"/>";
    // About 6 px a character at 11 px: a label only where it fits.
    if (x1 - x0 >= 6.0 * static_cast<double>(label.size()) + 4) {
      svg += "<text x=\"" + number((x0 + x1) / 2) + "\" y=\"" + number(y_bottom + 12) +
             "\" text-anchor=\"middle\">" + label + "</text>";
    }
    svg += "</g>\n";
    start = end;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (events[i].step < 1 || (i > 0 && events[i - 1].step == events[i].step)) continue;
    const std::string step = std::to_string(events[i].step);
    const double x = x_of(i, n);
    svg += "<g class=\"zt-step\" data-step=\"" + step + "\"><line x1=\"" + number(x) + "\" x2=\"" +
           number(x) + "\" y1=\"" + number(y_top) + "\" y2=\"" + number(y_bottom + 26) +
           "\" stroke=\"#555\"/><text x=\"" + number(x + 3) + "\" y=\"" + number(y_bottom + 26) +
           "\">step " + step + "</text></g>\n";
  }
  return svg;
}

}  // namespace

std::string rank_profile_json(const RankProfile& profile, const Config& config) {
  std::string categories;
  for (std::size_t c = 0; c < kMemoryCategoryCount; ++c) {
    categories += std::string(c ? ", " : "") +
                  json_string(memory_category_name(static_cast<MemoryCategory>(c)));
  }
  std::string timeline = timeline_json(profile.events);
  timeline = timeline.substr(1, timeline.size() - 2);  // its fields, inline
  return "{\"format\": \"zerotrain-memory-profile/1\", \"rank\": " + std::to_string(profile.rank) +
         ", \"world_size\": " + std::to_string(profile.world_size) +
         ", \"device\": " + json_string(profile.device) +
         ", \"stage\": " + std::to_string(config.zero.stage) +
         ", \"dtype\": " + json_string(config_name(config.precision.dtype)) +
         ", \"capacity_bytes\": " + std::to_string(profile.capacity_bytes) + ", \"categories\": [" +
         categories + "], \"truncated\": " + (profile.truncated ? "true" : "false") + ",\n " +
         timeline + ",\n \"estimate\": " +
         (profile.estimate.empty() ? std::string("null") : timeline_json(profile.estimate)) + "}\n";
}

std::string rank_profile_section(const RankProfile& profile) {
  const Replay measured = replay(profile.events);
  const Replay estimated = replay(profile.estimate);
  double top = static_cast<double>(std::max(measured.peak.total, estimated.peak.total));
  if (profile.capacity_bytes > 0 && profile.capacity_bytes < 2 * top) {
    top = std::max(top, static_cast<double>(profile.capacity_bytes));
  }
  top = std::max(top * 1.05, 1.0);
  const auto y_of = [&](double bytes) {
    return kTop + (kHeight - kTop - kBottom) * (1.0 - bytes / top);
  };
  const std::string rank = std::to_string(profile.rank);
  std::string svg = "<svg class=\"zt-rank-chart\" data-rank=\"" + rank + "\" width=\"" +
                    number(kWidth) + "\" height=\"" + number(kHeight) + "\" viewBox=\"0 0 " +
                    number(kWidth) + " " + number(kHeight) +
                    "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  // Axes: bytes at the top and at half; along the bottom, events marked by step and phase
  // (Note [Step and phase marks]).
  for (double fraction : {0.0, 0.5, 1.0}) {
    const double y = y_of(top * fraction);
    svg += "<line class=\"zt-grid\" x1=\"" + number(kLeft) + "\" x2=\"" + number(kWidth - kRight) +
           "\" y1=\"" + number(y) + "\" y2=\"" + number(y) + "\"/><text x=\"2\" y=\"" +
           number(y + 4) + "\">" +
           format_approximate_bytes(static_cast<std::int64_t>(top * fraction)) + "</text>\n";
  }
  svg += step_and_phase_marks(profile.events);
  // Stacked areas, category by category in the tracker's order.
  const std::size_t n = profile.events.size();
  for (std::size_t c = 0; c < kMemoryCategoryCount; ++c) {
    std::string upper, lower;
    for (const Point& p : measured.points) {
      std::int64_t below = 0;
      for (std::size_t k = 0; k < c; ++k) below += p.bytes[k];
      const double x = x_of(p.event, n);
      upper += (upper.empty() ? "M" : " L") + number(x) + "," +
               number(y_of(static_cast<double>(below + p.bytes[c])));
      lower = " L" + number(x) + "," + number(y_of(static_cast<double>(below))) + lower;
    }
    if (upper.empty()) continue;
    svg += "<path class=\"zt-area\" data-category=\"" +
           std::string(memory_category_name(static_cast<MemoryCategory>(c))) + "\" fill=\"" +
           kColors[c] + "\" d=\"" + upper + lower + " Z\"/>\n";
  }
  if (!estimated.points.empty()) {
    std::string line;
    for (const Point& p : estimated.points) {
      line += (line.empty() ? "M" : " L") + number(x_of(p.event, profile.estimate.size())) + "," +
              number(y_of(static_cast<double>(p.total)));
    }
    svg +=
        "<path class=\"zt-estimate\" fill=\"none\" stroke=\"#000\" stroke-dasharray=\"5,3\" d=\"" +
        line + "\"><title>estimate: peak " + format_approximate_bytes(estimated.peak.total) +
        "</title></path>\n";
  }
  if (profile.capacity_bytes > 0) {
    const double y = y_of(static_cast<double>(profile.capacity_bytes));
    svg += "<line class=\"zt-capacity\" stroke=\"#d00\" x1=\"" + number(kLeft) + "\" x2=\"" +
           number(kWidth - kRight) + "\" y1=\"" + number(y) + "\" y2=\"" + number(y) + "\"/>\n";
  }
  for (const Point& p : measured.points) {
    if (p.total != measured.peak.total) continue;
    const double x = x_of(p.event, n), y = y_of(static_cast<double>(p.total));
    svg += "<g class=\"zt-peak\"><circle cx=\"" + number(x) + "\" cy=\"" + number(y) +
           "\" r=\"4\"/><text x=\"" + number(std::min(x + 6, kWidth - 260)) + "\" y=\"" +
           number(y + 14) + "\">peak " + format_approximate_bytes(p.total) + " at '" +
           measured.peak.phase + "' (step " + std::to_string(measured.peak.step) + ")</text></g>\n";
    break;
  }
  svg += "</svg>\n";

  std::string table = "<table class=\"zt-peaks\"><tr><th>at the peak</th>";
  for (std::size_t c = 0; c < kMemoryCategoryCount; ++c) {
    table += "<th>" + std::string(memory_category_name(static_cast<MemoryCategory>(c))) + "</th>";
  }
  table += "<th>total</th></tr>";
  const auto row = [&](const char* what, const Peak& peak) {
    table += std::string("<tr><td>") + what + "</td>";
    for (std::size_t c = 0; c < kMemoryCategoryCount; ++c) {
      table += "<td>" + format_approximate_bytes(peak.bytes[c]) + "</td>";
    }
    table += "<td>" + format_approximate_bytes(peak.total) + "</td></tr>";
  };
  row("measured", measured.peak);
  if (!profile.estimate.empty()) row("estimated", estimated.peak);
  table += "</table>\n";
  return "<section class=\"zt-rank\" data-rank=\"" + rank + "\"><h2>rank " + rank + " (" +
         profile.device + ")" + (profile.truncated ? ", truncated" : "") + "</h2>\n" + svg + table +
         "</section>\n";
}

std::string memory_html(const std::vector<std::string>& sections, const std::string& title,
                        const std::string& note) {
  std::string legend = "<p class=\"zt-legend\">";
  for (std::size_t c = 0; c < kMemoryCategoryCount; ++c) {
    legend += "<span><i style=\"background:" + std::string(kColors[c]) + "\"></i>" +
              std::string(memory_category_name(static_cast<MemoryCategory>(c))) + "</span> ";
  }
  legend +=
      "<span>- - - the estimator's total</span> <span style=\"color:#d00\">— "
      "runtime.device_memory_limit</span></p>\n";
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + title +
      "</title>\n<style>body{font:14px sans-serif;margin:20px}svg text{font:11px "
      "sans-serif}.zt-grid{stroke:#ccc}.zt-legend i{display:inline-block;width:12px;"
      "height:12px;margin:0 4px}table{border-collapse:collapse}td,th{border:1px solid "
      "#ccc;padding:2px 6px;text-align:right}</style></head><body>\n<h1>" +
      title +
      "</h1>\n<p>Live bytes per category over initialization and the profiled steps, one event "
      "per allocation or free (x: event order, each step's start and the phases marked below "
      "it); the dashed line is the estimator's prediction "
      "for the same rank (two micro-batches per step).</p>\n" +
      legend;
  if (!note.empty()) html += "<p class=\"zt-note\"><b>" + note + "</b></p>\n";
  for (const std::string& section : sections) html += section;
  return html + "</body></html>\n";
}

std::filesystem::path rank_profile_path(const std::filesystem::path& run_dir, int rank) {
  return run_dir / "memory" / ("rank-" + std::to_string(rank) + ".json");
}

namespace {

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  std::ofstream out(path);
  out << text;
  if (!out) throw IoError("cannot write the memory profile " + path.string());
}

}  // namespace

// Note [Profile of a failed run]
// A rank out of memory cannot count on the others for the store's collective: they may be
// blocked in a collective of their own, and the launcher stops them once one rank fails.
// So each failing rank writes its own files, then rebuilds memory.html from the sections
// there are (its own, and those of any rank that failed before it). The rebuild holds an
// flock on memory/.html.lock (ranks as processes or as threads, each its own open file),
// so whichever rank rebuilds last sees every section and its page is the one left.
namespace {

std::filesystem::path rank_section_path(const std::filesystem::path& run_dir, int rank) {
  return run_dir / "memory" / ("rank-" + std::to_string(rank) + ".section.html");
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// An exclusive flock on `path` while it lives (without one, the page is still written).
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

std::string write_failed_rank_profile(const std::filesystem::path& run_dir,
                                      const RankProfile& profile, const Config& config) {
  write_file(rank_profile_path(run_dir, profile.rank), rank_profile_json(profile, config));
  write_file(rank_section_path(run_dir, profile.rank), rank_profile_section(profile));
  const FileLock lock(run_dir / "memory" / ".html.lock");
  std::vector<std::string> sections;
  std::string ranks;
  for (int r = 0; r < profile.world_size; ++r) {
    const std::filesystem::path section = rank_section_path(run_dir, r);
    if (!std::filesystem::exists(section)) continue;
    sections.push_back(read_file(section));
    ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  }
  const std::string note = "The run ran out of memory: profiles so far of the ranks that did (" +
                           std::string(sections.size() == 1 ? "rank " : "ranks ") + ranks +
                           "), up to the failed allocation; the other ranks were stopped.";
  const std::filesystem::path page = run_dir / "memory.html";
  const std::filesystem::path partial = run_dir / "memory" / ".memory.html.partial";
  write_file(partial, memory_html(sections, "zerotrain memory profile: " + run_dir.string(), note));
  std::error_code error;
  std::filesystem::rename(partial, page, error);
  if (error)
    throw IoError("cannot write the memory profile " + page.string() + ": " + error.message());
  return page.string();
}

std::string publish_memory_profile(comm::Store& store, const RankProfile& profile,
                                   const Config& config, const std::filesystem::path& run_dir,
                                   std::chrono::milliseconds timeout) {
  const std::string key = std::string(kKeyPrefix) + std::to_string(profile.rank);
  store.set(key + "/json", rank_profile_json(profile, config));
  store.set(key + "/section", rank_profile_section(profile));
  if (profile.rank != 0) return "";
  std::vector<std::string> sections;
  for (int r = 0; r < profile.world_size; ++r) {
    const std::string rank_key = std::string(kKeyPrefix) + std::to_string(r);
    write_file(rank_profile_path(run_dir, r), store.get(rank_key + "/json", timeout));
    sections.push_back(store.get(rank_key + "/section", timeout));
  }
  const std::filesystem::path page = run_dir / "memory.html";
  write_file(page, memory_html(sections, "zerotrain memory profile: " + run_dir.string()));
  return page.string();
}

}  // namespace zt::engine
