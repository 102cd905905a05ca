// The HTML report's timeline on the real ResNet50 num_workers=0 trace: the lanes built
// from the steady state stay bounded and account for every event; the page embeds them
// with the grouped findings beside them (one dataloader_stall line with its occurrences); and in
// headless Chromium a click on a finding's occurrence moves the timeline onto it.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <regex>

#include "suite_support.hpp"
#include "ttap/load.hpp"
#include "ttap/report_timeline.hpp"
#include "ttap/tree.hpp"
#include "ttap/windows.hpp"

namespace {

using ttap::suite::data_path;
using ttap::suite::ProcResult;
using ttap::suite::read_file;
using ttap::suite::run_process;
using ttap::suite::run_ttap;
using ttap::suite::scratch;

const std::string kResnet = data_path("kineto_resnet50_v100_nw0.json.gz");

TEST(HtmlTimeline, LanesAreBoundedAndAccountForEveryEvent) {
  const ttap::Trace t = ttap::load_trace(kResnet);
  const ttap::EventTree tree = ttap::EventTree::build(t);
  const ttap::SteadyState s = ttap::steady_state(t, tree);
  constexpr size_t kColumns = 1000;
  const ttap::ReportTimeline tl = ttap::build_report_timeline(t, tree, s.begin, s.end, kColumns);
  ASSERT_FALSE(tl.lanes.empty());
  EXPECT_TRUE(tl.lanes.front().gpu) << "GPU streams first";
  EXPECT_EQ(tl.lanes.front().label.rfind("GPU 0 stream ", 0), 0u) << tl.lanes.front().label;
  size_t events = 0, merged = 0, gpu_events = 0, cpu_lanes = 0;
  bool steps_drawn = false;
  for (const auto& lane : tl.lanes) {
    // Merging keeps a lane near one span per pixel column, however many events it holds.
    EXPECT_LE(lane.spans.size(), 2 * kColumns + 1) << lane.label;
    cpu_lanes += !lane.gpu;
    for (size_t i = 0; i < lane.spans.size(); ++i) {
      const auto& sp = lane.spans[i];
      EXPECT_GE(sp.begin, s.begin);
      EXPECT_LE(sp.end, s.end);
      EXPECT_LT(sp.begin, sp.end);
      if (i) {
        EXPECT_GE(sp.begin, lane.spans[i - 1].begin) << lane.label;
      }
      ASSERT_LT(sp.name, tl.names.size());
      events += sp.events;
      merged += sp.events > 1;
      if (lane.gpu) gpu_events += sp.events;
      steps_drawn |= tl.names[sp.name].rfind("ProfilerStep#", 0) == 0;
    }
  }
  EXPECT_EQ(events, tl.events);
  EXPECT_GT(merged, 0u) << "thousands of short kernels in ~1 s must merge at 1000 columns";
  EXPECT_GT(cpu_lanes, 0u);
  EXPECT_TRUE(steps_drawn) << "the main thread's ProfilerStep spans";
  // Every GPU event of the steady state is in a lane (merged or not).
  size_t expected_gpu = 0;
  for (ttap::EventId g : tree.gpu_events())
    expected_gpu += std::min(s.end, t.end(g)) > std::max(s.begin, t.ts[g]);  // drawn: some of it is in the range
  EXPECT_EQ(gpu_events, expected_gpu);
}

// The page, and what the embedded timeline says.
struct Page {
  std::string html;
  simdjson::dom::parser parser;
  simdjson::dom::element data;
};

void render(Page& p, const std::string& path) {
  const ProcResult r = run_ttap({"analyze", "--scorer", "rules", "--format", "html", "-o", path, kResnet});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  p.html = read_file(path);
  const std::string open = "<script type=\"application/json\" class=\"tl-data\" id=\"tl-0-data\">";
  const size_t b = p.html.find(open);
  ASSERT_NE(b, std::string::npos);
  const size_t e = p.html.find("</script>", b);
  ASSERT_EQ(p.parser.parse(p.html.substr(b + open.size(), e - b - open.size())).get(p.data), simdjson::SUCCESS);
}

TEST(HtmlTimeline, PageIsSelfContainedWithOneLinePerProblem) {
  Page p;
  render(p, scratch() + "/timeline.html");
  for (const char* fetch : {"http://", "https://", "src=", "href=", "url(", "@import"})
    EXPECT_EQ(p.html.find(fetch), std::string::npos) << fetch;
  EXPECT_LT(p.html.size(), 3u << 20) << "bounded for a 1 s steady state with 9096 launches";
  EXPECT_GT(p.data["lanes"].get_array().size(), 2u);
  EXPECT_EQ(p.data["windows"].get_array().size(), 100u);
  // One dataloader_stall line, ranked first (it saves the most), with its occurrences.
  const std::regex entry(R"re(<li class="entry" id="f-0-(\d+)"><span class="sev [a-z]+">[a-z]+</span> <b><code>([a-z_0-9]+)</code></b>)re");
  std::vector<std::string> ids;
  for (std::sregex_iterator it(p.html.begin(), p.html.end(), entry), end; it != end; ++it) ids.push_back((*it)[2]);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.front(), "dataloader_stall");
  EXPECT_EQ(std::count(ids.begin(), ids.end(), "dataloader_stall"), 1);
  EXPECT_NE(p.html.find("fixing it saves ~60.1 ms per step (34.3%)"), std::string::npos);
  size_t occurrences = 0;
  for (size_t at = p.html.find("id=\"occ-0-0-"); at != std::string::npos; at = p.html.find("id=\"occ-0-0-", at + 1)) ++occurrences;
  EXPECT_GE(occurrences, 5u) << "one stall per step: the first few are shown";
  // Each occurrence is highlighted on the timeline.
  EXPECT_GE(p.data["flags"].get_array().size(), occurrences);
}

// "data-v0=\"12.5\"" -> 12.5 from Chromium's DOM dump.
double attr(const std::string& dom, const std::string& element_id, const std::string& name) {
  const size_t at = dom.find("id=\"" + element_id + "\"");
  if (at == std::string::npos) return -1;
  const size_t open = dom.rfind('<', at), close = dom.find('>', at);
  const std::string tag = dom.substr(open, close - open);
  const std::regex re(name + "=\"([-0-9.]+)\"");
  std::smatch m;
  return std::regex_search(tag, m, re) ? std::stod(m[1]) : -1;
}

TEST(HtmlTimeline, ChromiumMovesTheTimelineOntoAClickedFinding) {
  const std::string chromium = "/usr/bin/chromium";
  if (!std::filesystem::exists(chromium)) GTEST_SKIP() << "chromium is not installed: the HTML click check is skipped";
  Page p;
  const std::string html = scratch() + "/timeline_click.html";
  render(p, html);
  const double span = double(p.data["span_us"]);
  auto dom_of = [&](const std::string& url) {
    const ProcResult r = run_process({chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
                                      "--window-size=1400,900", "--dump-dom", url});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  // As opened: the whole steady state.
  const std::string plain = dom_of("file://" + html);
  EXPECT_NEAR(attr(plain, "tl-0-canvas", "data-v0"), 0.0, 0.1);
  EXPECT_NEAR(attr(plain, "tl-0-canvas", "data-v1"), span, 0.1);
  // A click on the top finding's second occurrence (the page clicks the one its address
  // names when it loads, through the same handler as the mouse).
  const std::string dom = dom_of("file://" + html + "#occ-0-0-1");
  const double b = attr(dom, "occ-0-0-1", "data-b"), e = attr(dom, "occ-0-0-1", "data-e");
  const double v0 = attr(dom, "tl-0-canvas", "data-v0"), v1 = attr(dom, "tl-0-canvas", "data-v1");
  ASSERT_GT(e, b);
  EXPECT_LE(v0, b);
  EXPECT_GE(v1, e);
  EXPECT_NEAR(v1 - v0, 1.5 * (e - b), 0.01 * span) << "the occurrence and a quarter of it either side";
  EXPECT_LT(v1 - v0, 0.5 * span) << "zoomed in, not the whole trace";
  EXPECT_NE(dom.find("class=\"occ selected\" id=\"occ-0-0-1\""), std::string::npos);
  EXPECT_NE(dom.find("showing +"), std::string::npos);
}

}  // namespace
