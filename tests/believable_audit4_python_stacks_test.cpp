// Findings a user can believe (issue 12, item 0), audit of the tenth round: a trace recorded
// with Python stacks (torch.profiler.profile(with_stack=True)) runs the Python tracer, which
// hooks every Python call and makes the host slower than in a run profiled without it, so
// cpu_bound_step, launch_bound and host-side gpu_idle read larger there. The report said
// nothing of it; its headline now says so once, with the count of python_function events it
// saw (no overhead figure: no trace here holds one job recorded with and without stacks;
// h200_twin's pair has no stacks at all).
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "suite_support.hpp"
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

}  // namespace
