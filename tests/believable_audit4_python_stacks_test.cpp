// Findings a user can believe (issue 12, item 0), audit of the tenth round: a trace recorded
// with Python stacks (torch.profiler.profile(with_stack=True)) runs the Python tracer, which
// hooks every Python call and makes the host slower than in a run profiled without it, so
// cpu_bound_step, launch_bound and host-side gpu_idle read larger there. The report said
// nothing of it; its headline now says so once, with the count of python_function events it
// saw, and, with steps, a floor of the tracer's own time taken from the trace's own calls
// (the PythonTracerCost tests below; no trace here holds one job recorded with and without
// stacks: h200_twin's pair has no stacks at all).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "rules_support.hpp"
#include "suite_support.hpp"
#include "ttap/analyze.hpp"
#include "ttap/report.hpp"
#include "ttap/report_reader.hpp"

namespace {

using namespace ttap;

using suite::count_of;

Report report_of(const std::string& trace) {
  Report r;
  r.traces.push_back(rules_support::analyze_all_windows(rules_support::load(suite::data_path(trace))));
  return r;
}

// As `analyze --scorer rules` reports it: the groups (and so the ranges) a user reads.
Report default_report_of(const std::string& trace) {
  Report r;
  r.traces.push_back(rules_support::analyze_default_windows(rules_support::load(suite::data_path(trace))));
  return r;
}

constexpr const char* kNote = "note: recorded with Python stacks";

TEST(BelievableAudit4PythonStacks, ATraceWithPythonStacksSaysHostTimesReadLarger) {
  // 54073 python_function events in its 34.5 ms (counted with Python's json module).
  const Report r = report_of("tracelens_sglang_decode_bs32.json.gz");
  EXPECT_EQ(r.traces.front().headline.python_functions, 54073);
  const std::string text = render_analyze_text(r);
  EXPECT_EQ(count_of(text, kNote), 1u) << text;
  EXPECT_NE(text.find("(54073 python_function events, torch.profiler.profile(with_stack=True)): the Python tracer slows the host"),
            std::string::npos)
      << text;
  EXPECT_EQ(count_of(render_analyze_markdown(r), kNote), 1u);
  EXPECT_EQ(count_of(render_analyze_html(r), kNote), 1u);
  EXPECT_NE(render_analyze_json(r).find(R"("python_functions":54073)"), std::string::npos);
}

TEST(BelievableAudit4PythonStacks, ATraceWithoutThemSaysNothing) {
  // The controlled pair's twin, recorded without stacks.
  const Report r = report_of("h200_twin/resnet50_h200_nw0.json.gz");
  EXPECT_EQ(r.traces.front().headline.python_functions, 0);
  EXPECT_EQ(count_of(render_analyze_text(r), kNote), 0u);
  EXPECT_NE(render_analyze_json(r).find(R"("python_functions":0)"), std::string::npos);
}

TEST(BelievableAudit4PythonStacks, TheCountSurvivesAReportReadBack) {
  // --baseline and `ttap merge` read an earlier JSON report back; merge renders it again,
  // note included.
  const Report r = report_of("gpu_zoo/gpuzoo_0023_ssdlite320_mobilenet_v3_large_train.json.gz");
  EXPECT_EQ(r.traces.front().headline.python_functions, 33247);
  const ReadReports back = read_analyze_reports(render_analyze_json(r), "audit4.json");
  ASSERT_EQ(back.reports.size(), 1u);
  ASSERT_EQ(back.reports.front().traces.size(), 1u);
  EXPECT_EQ(back.reports.front().traces.front().headline.python_functions, 33247);
  EXPECT_EQ(count_of(render_analyze_text(back.reports.front()), kNote), 1u);
}

// The tracer's own time, a floor, from the trace's own calls (analyze.hpp, PythonTracerCost;
// classify/python_tracer_note.cpp). gpuzoo_0032 is a resnet18 inference run with no injected
// mistake, recorded with with_stack=True, and its report led with "error gpu_idle ... 90.4%
// of step time" with no figure for the tracer. It now says how much of that the tracer's own
// time is, at least: 1483 python_function events per step (2966 starting in its two steps,
// all threads, counted with Python's json module) x the median recorded time of a built-in
// call that runs nothing else (622 ns over 1032 such calls by that count; the tree's nesting
// differs by two calls).
const GroupedFinding* first_of(const TraceReport& t, const std::string& id) {
  for (const GroupedFinding& g : t.findings)
    if (g.id == id) return &g;
  return nullptr;
}

bool has_line(const GroupedFinding& g, const std::string& start) {
  for (const std::string& line : g.evidence)
    if (line.starts_with(start)) return true;
  return false;
}

constexpr const char* kZoo32 = "gpu_zoo/gpuzoo_0032_resnet18_inference.json.gz";

TEST(PythonTracerCost, TheTracersOwnTimeComesFromTheTracesCalls) {
  const auto& l = rules_support::load(suite::data_path(kZoo32));
  const auto c = python_tracer_cost(l.trace, l.tree);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->events_per_step, 1483);
  EXPECT_NEAR(static_cast<double>(c->per_event), 622.0, 10.0);
  EXPECT_NEAR(static_cast<double>(c->calls_timed), 1032.0, 10.0);
  EXPECT_EQ(c->per_step, 2966 * c->per_event / 2);
}

TEST(PythonTracerCost, TheHeadlineAndTheHostSideFindingsSayIt) {
  const Report r = default_report_of(kZoo32);
  const TraceReport& t = r.traces.front();
  EXPECT_GT(t.headline.python_tracer_per_step, 900'000);
  EXPECT_LT(t.headline.python_tracer_per_step, 950'000);
  const std::string text = render_analyze_text(r);
  EXPECT_EQ(count_of(text, "its own time is at least ~"), 1u) << text;
  EXPECT_NE(text.find("% of step time): 1483 python_function events per step x "), std::string::npos) << text;
  // Each finding counts the entries and exits of the calls inside its own ranges on the threads
  // launching GPU work, not the whole step's 1483 calls: 3398 over the two steps for gpu_idle
  // (whole calls on any thread launching in it, the pin-memory one too, read 1122 a step), and
  // 2 for launch_bound (PythonTracerShare below), counted with Python's json module over the
  // trace within the ranges `analyze --scorer rules` holds (docs/accuracy-log.md, "tracer3").
  const GroupedFinding* idle = first_of(t, "gpu_idle");
  ASSERT_NE(idle, nullptr);
  EXPECT_TRUE(has_line(*idle, "the profiler may have added ~")) << text;
  EXPECT_NE(text.find("inside this finding's ranges (1699 python_function call entries and exits per step x 312 ns, each half "
                      "the per-call floor in the note above)"),
            std::string::npos)
      << text;
  const GroupedFinding* launch = first_of(t, "launch_bound");
  ASSERT_NE(launch, nullptr);
  EXPECT_TRUE(has_line(*launch, "the profiler may have added ~312 ns per step or more")) << text;
  EXPECT_EQ(count_of(text, "over the whole step"), 0u) << text;
  // Severity keeps the full cost: the floor is what the tracer took, not what is left without it.
  EXPECT_EQ(idle->severity, Severity::error);
}

TEST(PythonTracerCost, OnlyTheHostSideFindingsSayIt) {
  // gpuzoo_0058 (maskrcnn train, stacks) has launch_bound and cpu_bound_step beside
  // offload_pingpong and layout_conversion, which the tracer does not slow.
  // Entries and exits inside each one's ranges, by the same count as above: 13492 and 10158
  // over the two steps, and 166 and 159 for cpu_bound_step's two 1%-of-step groups (numpy's
  // quantile and histogram on the main thread, which launches nothing there).
  const Report r = default_report_of("gpu_zoo/gpuzoo_0058_maskrcnn_resnet50_fpn_train.json.gz");
  size_t host = 0, other = 0, said = 0;
  for (const GroupedFinding& g : r.traces.front().findings) {
    const bool host_side = g.id == "gpu_idle" || g.id == "launch_bound" || g.id == "cpu_bound_step";
    const bool says = has_line(g, "the profiler may have added");
    EXPECT_TRUE(!says || host_side) << g.id;
    said += says;
    ++(host_side ? host : other);
  }
  EXPECT_GE(host, 3u);
  EXPECT_GE(other, 2u);
  EXPECT_EQ(said, 4u);
  const std::string text = render_analyze_text(r);
  EXPECT_NE(text.find("ranges (6746 python_function call entries and exits per step x "), std::string::npos) << text;
  EXPECT_NE(text.find("ranges (5079 python_function call entries and exits per step x "), std::string::npos) << text;
  EXPECT_NE(text.find("ranges (83 python_function call entries and exits per step x "), std::string::npos) << text;
  EXPECT_NE(text.find("ranges (79 python_function call entries and exits per step x "), std::string::npos) << text;
}

// The tracer works at a call's two ends (torch/csrc/autograd/profiler_python.cpp: a hook on
// each call and each return, nothing between), so a finding counts the entries and exits that
// lie in its ranges, not whole calls: gpuzoo_0032's launch_bound (launch gaps and op dispatch
// between the ops' Python calls) held no whole call under `--scorer rules` and said nothing.

// The count a finding's tracer line says, or -1 without the line.
int64_t ends_said(const GroupedFinding& g) {
  constexpr std::string_view kCount = " python_function call entries and exits per step";
  for (const std::string& line : g.evidence) {
    const size_t at = line.find(kCount);
    if (at == std::string::npos) continue;
    const size_t open = line.rfind('(', at);
    return std::stoll(line.substr(open + 1, at - open - 1));
  }
  return -1;
}

// The same count built from the trace's events by a loop of its own: the start and end
// timestamps of the steps' python_function events on the threads whose runtime calls share a
// correlation id with a kernel, copy or memset, each inside one of the finding's spans (edges
// included), per step.
int64_t ends_expected(const rules_support::Loaded& l, const GroupedFinding& g) {
  const Trace& t = l.trace;
  std::set<int64_t> gpu_correlations;
  for (EventId e = 0; e < t.size(); ++e)
    if (is_gpu_activity(t.category[e]) && t.correlation[e] != kNoId) gpu_correlations.insert(t.correlation[e]);
  std::set<TrackId> launching;
  for (EventId e = 0; e < t.size(); ++e)
    if (is_launch(t.category[e]) && gpu_correlations.contains(t.correlation[e])) launching.insert(t.track[e]);
  const auto in_a_span = [&](int64_t x) {
    return std::any_of(g.cost_spans.begin(), g.cost_spans.end(), [&](const auto& s) { return s.first <= x && x <= s.second; });
  };
  int64_t in = 0;
  for (EventId e = 0; e < t.size(); ++e)
    if (t.category[e] == Category::PythonFunction && l.tree.step_of(e) >= 0 && launching.contains(t.track[e]))
      in += in_a_span(t.ts[e]) + in_a_span(t.end(e));
  return in / static_cast<int64_t>(l.tree.steps().size());
}

// Every host-side group of the report with every window flagged (the most groups, so the most
// ranges checked): its line's count is the loop's, and a group says the line exactly when that
// count is not 0. Returns how many groups said it.
size_t check_ends(const std::string& trace) {
  const auto& l = rules_support::load(suite::data_path(trace));
  const TraceReport t = rules_support::analyze_all_windows(l);
  size_t said = 0;
  for (const GroupedFinding& g : t.findings) {
    if (g.id != "gpu_idle" && g.id != "launch_bound" && g.id != "cpu_bound_step") continue;
    const int64_t expected = ends_expected(l, g);
    EXPECT_EQ(ends_said(g), expected == 0 ? -1 : expected) << trace << " " << g.id << " " << g.origin;
    said += expected > 0;
  }
  return said;
}

TEST(PythonTracerShare, EachEntryAndExitCountsInTheRangesItLiesIn) {
  // Groups with the line; every group's count also matched one made with Python's json module
  // over the trace within the same ranges (docs/accuracy-log.md, "tracer3").
  EXPECT_EQ(check_ends(kZoo32), 11u);
  EXPECT_EQ(check_ends("gpu_zoo/gpuzoo_0058_maskrcnn_resnet50_fpn_train.json.gz"), 17u);
  EXPECT_EQ(check_ends("gpu_zoo/gpuzoo_0064_resnet18_train.json.gz"), 13u);
  // owlv2's cpu_bound_step (aten::max, the main thread computing with nothing to launch) had no
  // line: its ranges hold no launch, and only threads launching there were counted.
  EXPECT_EQ(check_ends("tracelens_owlv2_mi300.json.gz"), 1u);
}

TEST(PythonTracerShare, ALaunchBoundGroupBetweenCallsCountsTheEndsInIt) {
  // gpuzoo_0032's launch_bound ranges (op dispatch and launch gaps) hold no whole call and read
  // nothing; one end a step lies in them (Python's count: 2 over the two steps). The ends of the
  // calls around its ops lie 5 to 125 us outside its first twelve ranges: the tracer ran next to
  // them, not in them.
  const Report r = default_report_of(kZoo32);
  const GroupedFinding* launch = first_of(r.traces.front(), "launch_bound");
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ(ends_said(*launch), 1);
  EXPECT_EQ(launch->severity, Severity::warning);
}

TEST(PythonTracerShare, TheMainThreadComputingWithNothingToLaunchCounts) {
  // tracelens_owlv2_mi300: cpu_bound_step in aten::max, 45.9 ms a step while the main thread
  // computes and the GPU idles; 3310 ends of its python_function calls lie in it (Python's count).
  const Report r = report_of("tracelens_owlv2_mi300.json.gz");
  const GroupedFinding* host = first_of(r.traces.front(), "cpu_bound_step");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(ends_said(*host), 3310);
  EXPECT_EQ(count_of(render_analyze_text(r), "(3310 python_function call entries and exits per step x 76 ns"), 1u);
}

TEST(PythonTracerCost, ATraceWithoutStacksSaysNothing) {
  const Report r = report_of("h200_twin/resnet50_h200_nw0.json.gz");
  EXPECT_EQ(r.traces.front().headline.python_tracer_per_step, 0);
  EXPECT_EQ(count_of(render_analyze_text(r), "the profiler may have added"), 0u);
  EXPECT_NE(render_analyze_json(r).find(R"("python_tracer":null)"), std::string::npos);
}

TEST(PythonTracerCost, TheEstimateSurvivesAReportReadBack) {
  const Report r = report_of(kZoo32);
  const ReadReports back = read_analyze_reports(render_analyze_json(r), "tracer.json");
  ASSERT_EQ(back.reports.size(), 1u);
  const Headline& h = back.reports.front().traces.front().headline;
  EXPECT_EQ(h.python_tracer_per_step, r.traces.front().headline.python_tracer_per_step);
  EXPECT_EQ(h.python_functions_per_step, 1483);
  EXPECT_EQ(count_of(render_analyze_text(back.reports.front()), "its own time is at least ~"), 1u);
}

}  // namespace
