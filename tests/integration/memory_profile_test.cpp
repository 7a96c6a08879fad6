// The memory-profiling mode as users run it: rank-K.json files whose events add up to the
// tracker's figures, memory.html rendered by a real browser (Debian's headless Chromium),
// `zerotrain profile`, the profile and page an out-of-memory run leaves, and a bad step
// count.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "support/program_run.h"
#include "support/temp_dir.h"
#include "support/zerotrain_cli.h"

namespace zt {
namespace {

using testing::config_path;
using testing::count_of;
using testing::zerotrain;

namespace fs = std::filesystem;

struct Event {
  std::int64_t step, category, delta, category_bytes, total;
};

// The measured events of a rank-K.json (those before its "estimate"): rows of
// [time_s, step, phase, category, delta, category_bytes, total, name].
std::vector<Event> measured_events(const std::string& json) {
  const std::string measured = json.substr(0, json.find("\"estimate\":"));
  std::vector<Event> events;
  std::size_t at = measured.find("\"events\": [");
  if (at == std::string::npos) return events;
  for (at = measured.find("\n  [", at); at != std::string::npos;
       at = measured.find("\n  [", at + 1)) {
    double time_s = 0;
    long long step = 0, phase = 0, category = 0, delta = 0, category_bytes = 0, total = 0;
    if (std::sscanf(measured.c_str() + at, " [%lf, %lld, %lld, %lld, %lld, %lld, %lld", &time_s,
                    &step, &phase, &category, &delta, &category_bytes, &total) != 7) {
      break;
    }
    events.push_back({step, category, delta, category_bytes, total});
  }
  return events;
}

std::int64_t json_number_after(const std::string& json, const std::string& key) {
  const std::size_t at = json.find(key);
  if (at == std::string::npos) return -1;
  return std::stoll(json.substr(at + key.size()));
}

fs::path profiled_run(const testing::TempDir& dir) {
  const fs::path run_dir = dir.path() / "run";
  const auto result = zerotrain(
      dir, {"launch", "--nproc-per-node", "2", config_path("tiny.toml"), "--set",
            "runtime.memory_profile=true", "--set", "runtime.memory_profile_steps=2", "--set",
            "train.steps=2", "--set", "zero.stage=3", "--set", "run.dir=" + run_dir.string()});
  EXPECT_EQ(result.exit_code, 0) << result.output();
  EXPECT_NE(result.out.find("memory profile: " + (run_dir / "memory.html").string()),
            std::string::npos)
      << result.out;
  return run_dir;
}

TEST(MemoryProfile, EventsAddUpToTheTrackersFigures) {
  testing::TempDir dir;
  const fs::path run_dir = profiled_run(dir);
  const std::string memory_json = testing::read_text(run_dir / "memory.json");
  for (int rank = 0; rank < 2; ++rank) {
    const std::string json =
        testing::read_text(run_dir / "memory" / ("rank-" + std::to_string(rank) + ".json"));
    EXPECT_NE(json.find("\"format\": \"zerotrain-memory-profile/1\""), std::string::npos);
    const std::vector<Event> events = measured_events(json);
    ASSERT_GT(events.size(), 50u) << json.substr(0, 2000);
    std::array<std::int64_t, 7> live{};
    std::int64_t total = 0, peak = 0, last_step = 0;
    for (const Event& e : events) {
      live[static_cast<std::size_t>(e.category)] += e.delta;
      total += e.delta;
      ASSERT_EQ(live[static_cast<std::size_t>(e.category)], e.category_bytes);
      ASSERT_EQ(total, e.total);
      ASSERT_GE(e.step, last_step);  // steps only go forward
      last_step = e.step;
      peak = std::max(peak, total);
    }
    EXPECT_EQ(last_step, 2);
    EXPECT_EQ(json_number_after(json, "\"peak\": {\"total_bytes\": "), peak);
    // The profile covers the whole run, so its peak is memory.json's for this rank.
    const std::string rank_entry =
        memory_json.substr(memory_json.find("{\"rank\": " + std::to_string(rank)));
    const std::string total_entry = rank_entry.substr(rank_entry.find("\"total\": "));
    EXPECT_EQ(json_number_after(total_entry, "\"peak_bytes\": "), peak) << total_entry;
    // The estimate is there, and predicts the same peak.
    const std::string estimate = json.substr(json.find("\"estimate\":"));
    EXPECT_EQ(json_number_after(estimate, "\"peak\": {\"total_bytes\": "), peak);
  }
}

// The value of the first attribute `name` at or after `at` in html (-1: none).
double attribute_after(const std::string& html, std::size_t at, const std::string& name) {
  const std::size_t value = html.find(name + "=\"", at);
  if (value == std::string::npos) return -1;
  return std::stod(html.substr(value + name.size() + 2));
}

TEST(MemoryProfile, HtmlMarksEachStepAndPhaseAlongTheXAxis) {
  testing::TempDir dir;
  const fs::path run_dir = profiled_run(dir);
  const std::string html = testing::read_text(run_dir / "memory.html");
  for (int rank = 0; rank < 2; ++rank) {
    const std::string r = std::to_string(rank);
    const std::size_t chart = html.find("<svg class=\"zt-rank-chart\" data-rank=\"" + r + "\"");
    ASSERT_NE(chart, std::string::npos);
    const std::string svg = html.substr(chart, html.find("</svg>", chart) - chart);
    // A labelled line where each of the two profiled steps starts, step 2 right of step 1.
    const std::size_t step1 = svg.find("<g class=\"zt-step\" data-step=\"1\">");
    const std::size_t step2 = svg.find("<g class=\"zt-step\" data-step=\"2\">");
    ASSERT_NE(step1, std::string::npos) << svg.substr(0, 3000);
    ASSERT_NE(step2, std::string::npos) << svg.substr(0, 3000);
    EXPECT_EQ(count_of(svg, "class=\"zt-step\""), 2u);
    EXPECT_NE(svg.find(">step 1</text>", step1), std::string::npos);
    EXPECT_NE(svg.find(">step 2</text>", step2), std::string::npos);
    const double x1 = attribute_after(svg, step1, "x1"), x2 = attribute_after(svg, step2, "x1");
    EXPECT_GT(x1, 70.0) << "after initialization, right of the byte axis";
    EXPECT_GT(x2, x1);
    // Bands for the phases of each step, labelled where wide enough.
    for (const char* phase : {"forward", "backward", "optimizer"}) {
      for (const char* step : {"1", "2"}) {
        EXPECT_NE(svg.find("<g class=\"zt-phase\" data-phase=\"" + std::string(phase) +
                           "\" data-step=\"" + step + "\">"),
                  std::string::npos)
            << phase << " of step " << step << " in rank " << r;
      }
    }
    EXPECT_NE(svg.find(">forward</text>"), std::string::npos) << svg.substr(0, 3000);
    EXPECT_NE(svg.find(">backward</text>"), std::string::npos);
    // The marks are drawn under the areas, not over them.
    EXPECT_LT(step1, svg.find("class=\"zt-area\""));
  }
}

std::string chromium() {
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (fs::exists(candidate)) return candidate;
  }
  return "";
}

TEST(MemoryProfile, HtmlRendersAChartPerRankInChromium) {
  const std::string browser = chromium();
  if (browser.empty()) {
    GTEST_SKIP() << "Chromium is not installed (scripts/setup installs Debian's chromium)";
  }
  testing::TempDir dir;
  const fs::path run_dir = profiled_run(dir);
  const std::string html = testing::read_text(run_dir / "memory.html");
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"))
      << "nothing but the SVG namespace may name the network";
  EXPECT_EQ(html.find("<script"), std::string::npos);
  const auto rendered = testing::run_program(
      {browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
       "--user-data-dir=" + (dir.path() / "chromium").string(), "--dump-dom",
       "file://" + (run_dir / "memory.html").string()},
      dir.path(), "chromium", {}, std::chrono::seconds(120));
  ASSERT_EQ(rendered.exit_code, 0) << rendered.err;
  const std::string& dom = rendered.out;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string r = std::to_string(rank);
    EXPECT_NE(dom.find("<svg class=\"zt-rank-chart\" data-rank=\"" + r + "\""), std::string::npos)
        << dom.substr(0, 3000);
  }
  EXPECT_EQ(count_of(dom, "class=\"zt-peak\""), 2u);
  EXPECT_EQ(count_of(dom, "class=\"zt-step\""), 4u) << "two steps marked on each chart";
  EXPECT_EQ(count_of(dom, "class=\"zt-estimate\""), 2u);
  EXPECT_GE(count_of(dom, "class=\"zt-area\" data-category=\"activations\""), 2u);
}

TEST(MemoryProfile, ProfileCommandRunsTheProfiledStepsOnly) {
  testing::TempDir dir;
  const fs::path run_dir = dir.path() / "run";
  const auto result =
      zerotrain(dir, {"profile", config_path("mlp.toml"), "--set", "runtime.memory_profile_steps=1",
                      "--set", "run.dir=" + run_dir.string()});
  ASSERT_EQ(result.exit_code, 0) << result.output();
  EXPECT_NE(result.out.find("after 1 steps"), std::string::npos) << result.out;
  EXPECT_TRUE(fs::exists(run_dir / "memory" / "rank-0.json"));
  EXPECT_TRUE(fs::exists(run_dir / "memory.html"));
}

TEST(MemoryProfile, OutOfMemoryWritesTheProfileSoFar) {
  testing::TempDir dir;
  const fs::path run_dir = dir.path() / "run";
  const auto result =
      zerotrain(dir, {"train", config_path("offload-demo.toml"), "--set", "offload.optimizer=none",
                      "--set", "offload.params=none", "--set", "runtime.memory_profile=true",
                      "--set", "run.dir=" + run_dir.string()});
  ASSERT_EQ(result.exit_code, 1) << result.output();
  const fs::path profile = run_dir / "memory" / "rank-0.json";
  EXPECT_NE(result.err.find("The memory profile so far is in " + profile.string()),
            std::string::npos)
      << result.err;
  ASSERT_TRUE(fs::exists(profile));
  // It ran out while allocating optimizer states at initialization: what was live then.
  const std::string json = testing::read_text(profile);
  EXPECT_GE(measured_events(json).size(), 2u) << json;
  EXPECT_NE(json.find("\"phases\": [\"initialization\""), std::string::npos) << json;
  // And the page, of the one rank there is.
  const std::string html = testing::read_text(run_dir / "memory.html");
  EXPECT_NE(html.find("ran out of memory"), std::string::npos) << html.substr(0, 3000);
  EXPECT_EQ(count_of(html, "<svg class=\"zt-rank-chart\""), 1u);
}

// configs/offload-demo.toml as README runs it (stage 3, 2 ranks, 64 MiB each) runs out of
// memory in the first backward; profiled, it still leaves memory.html, with the chart of
// each rank that got as far as writing its profile (the launcher stops the others).
TEST(MemoryProfile, ARunOutOfMemoryOnTwoRanksLeavesMemoryHtml) {
  testing::TempDir dir;
  const fs::path run_dir = dir.path() / "run";
  const auto result =
      zerotrain(dir, {"launch", "--nproc-per-node", "2", config_path("offload-demo.toml"), "--set",
                      "runtime.memory_profile=true", "--set", "run.dir=" + run_dir.string()});
  ASSERT_EQ(result.exit_code, 1) << result.output();
  EXPECT_NE(result.err.find("out of memory on cpu:"), std::string::npos) << result.err;
  ASSERT_TRUE(fs::exists(run_dir / "memory.html")) << result.err;
  EXPECT_NE(result.err.find("the chart of the ranks out of memory is " +
                            (run_dir / "memory.html").string()),
            std::string::npos)
      << result.err;
  const std::string html = testing::read_text(run_dir / "memory.html");
  std::size_t charts = 0;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string r = std::to_string(rank);
    const bool json = fs::exists(run_dir / "memory" / ("rank-" + r + ".json"));
    const bool chart =
        html.find("<svg class=\"zt-rank-chart\" data-rank=\"" + r + "\"") != std::string::npos;
    EXPECT_EQ(chart, json) << "rank " << r << ": a chart for each rank-K.json, no other";
    charts += chart ? 1 : 0;
  }
  EXPECT_GE(charts, 1u) << html.substr(0, 3000);
  EXPECT_NE(html.find("ran out of memory"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(MemoryProfile, ZeroStepsNamesTheKey) {
  testing::TempDir dir;
  const auto result = zerotrain(
      dir, {"profile", config_path("tiny.toml"), "--set", "runtime.memory_profile_steps=0"});
  EXPECT_EQ(result.exit_code, 2) << result.output();
  EXPECT_NE(result.err.find("runtime.memory_profile_steps"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace zt
