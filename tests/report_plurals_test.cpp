// Counts in the reports read as a person writes them (issue 12 item 0: lines users read):
// the renderers wrote their plurals inline and some not at all, so a count of one read plural
// ("1 calls" of every module called once in `ttap tree --modules`, "1 windows per trace, top
// 1 windows classified" in the HTML report). They now call count_text, as the rules do.
#include <gtest/gtest.h>

#include "test_util.hpp"

namespace {

TEST(ReportPlurals, ModuleCalledOnceReadsOneCall) {
  const auto r = ttap::test::run_ttap("tree --modules --depth 2 " + ttap::test::data("tracelens_vit_nsfw_h100.json.gz"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(module) ViTModel_0  [1.225 ms GPU, 100.0%, 156 kernels, self 0.000 ms, 1 call]"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find(" 1 calls"), std::string::npos) << r.out;
}

TEST(ReportPlurals, HtmlSettingsLineCountsOneWindow) {
  const auto r = ttap::test::run_ttap("analyze --scorer rules --windows 1 --top-k 1 --fail-on none --format html " +
                                      ttap::test::data("hta_event_sync_small.json.gz"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(": 1 window per trace, top 1 window classified, scorer rules."), std::string::npos);
  EXPECT_NE(r.out.find("1 window over"), std::string::npos);
}

}  // namespace
