// Findings a user can believe (issue 12, item 0), audit of the tenth round: the HTML report
// of a trace without findings said "No findings." twice, once in the findings panel beside
// the timeline and once more under the window overview (tracelens_vllm_piecewise_graph_execution,
// whose GPU is 99.8% busy, and hta_cpu_only). It says it once; a report read back from JSON
// (`ttap merge`: no timeline, so no panel) still says it.
#include <gtest/gtest.h>

#include <string>

#include "suite_support.hpp"

namespace {

using namespace ttap;

using suite::count_of;

TEST(BelievableAudit4Html, ATraceWithoutFindingsSaysSoOnce) {
  for (const char* trace : {"tracelens_vllm_piecewise_graph_execution.json.gz", "hta_cpu_only.json.gz"}) {
    const auto r = suite::analyze({"--format", "html", "--threads", "1", suite::data_path(trace)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(count_of(r.out, "No findings."), 1u) << trace;
  }
}

TEST(BelievableAudit4Html, AReportReadBackSaysSoToo) {
  const std::string json = suite::scratch() + "/audit4_clean.json";
  const auto a = suite::analyze({"--format", "json", "--threads", "1", "-o", json, suite::data_path("hta_cpu_only.json.gz")});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto m = suite::run_ttap({"merge", json, "--format", "html"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(count_of(m.out, "No findings."), 1u) << m.out.substr(0, 2000);
}

}  // namespace
