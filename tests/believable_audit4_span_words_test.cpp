// Findings a user can believe (issue 12, item 0), audit of the tenth round: on a trace without
// profiler steps the window strip ended "(0.64 to 0.93; 100 windows over 987 ms of gpu)" and
// the HTML page "100 windows over 987 ms of the steady state (gpu)": "gpu" is the report's
// internal name for the span (JSON steady_state.source), not words. The span is now worded as
// the GPU headline line words it: "from first to last GPU activity"
// (tracelens_sglang_qwen3_8b_prefilldecode); a trace with steps still reads "of steps".
#include <gtest/gtest.h>

#include <string>

#include "suite_support.hpp"

namespace {

using namespace ttap;

TEST(BelievableAudit4SpanWords, TheWindowedSpanIsWorded) {
  const std::string trace = suite::data_path("tracelens_sglang_qwen3_8b_prefilldecode.json.gz");
  const auto text = suite::analyze({"--threads", "1", "--fail-on", "none", trace});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("100 windows over 987 ms from first to last GPU activity)"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find(" of gpu)"), std::string::npos) << text.out;
  const auto html = suite::analyze({"--threads", "1", "--fail-on", "none", "--format", "html", trace});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_NE(html.out.find("100 windows over 987 ms from first to last GPU activity.</p>"), std::string::npos);
  EXPECT_EQ(html.out.find("(gpu)"), std::string::npos);

  const auto steps = suite::analyze({"--threads", "1", "--fail-on", "none", suite::data_path("kineto_resnet50_v100_nw0.json.gz")});
  EXPECT_NE(steps.out.find("100 windows over 1.05 s of steps)"), std::string::npos) << steps.out;
}

}  // namespace
