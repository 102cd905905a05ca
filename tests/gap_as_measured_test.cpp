// gpu_idle's gap lines give a gap as the trace has it (issue 12 item 0: evidence lines exact).
// Since the rules' tenth round launch_bound takes the host's dispatch inside long gaps, and
// gpu_idle's lines named what was left of a gap: hta_ddp_a100_nccl read "5.32 ms gap" for a
// 5.34 ms gap whose first 28 us are DDP's copy_bucket_to_grad dispatching its copy. A user who
// measures the gap finds 5.34 ms; the line now gives that and says which part is launch_bound's.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using namespace ttap;
using rules_support::Loaded;

TEST(GapAsMeasured, GapLineGivesTheWholeGapAndTheDispatchPartOfIt) {
  const Loaded& l = rules_support::load(test::data("hta_ddp_a100_nccl.json.gz"));
  const std::vector<RuleFinding> across = l.engine->detect(l.begin, l.end);
  const RuleFinding* idle = rules_support::find_finding(across, "gpu_idle");
  ASSERT_NE(idle, nullptr);
  EXPECT_TRUE(rules_support::evidence_has(
      *idle, "5.34 ms gap (28 us of it dispatch, launch_bound's) at +207.2 ms from the range start"))
      << rules_support::findings_text({*idle});
  // Its cost is still only the idle no specific pattern explains: the dispatch stays launch_bound's.
  const RuleFinding* lb = rules_support::find_finding(across, "launch_bound");
  ASSERT_NE(lb, nullptr);
  for (auto [b, e] : idle->spans)
    for (auto [lb_b, lb_e] : lb->spans) EXPECT_TRUE(e <= lb_b || lb_e <= b) << "gpu_idle and launch_bound share idle";
}

// In every window, a gap line that names a dispatch part names one that launch_bound reports
// there, and less than the gap: the parts are of one gap, not two.
TEST(GapAsMeasured, DispatchPartIsLaunchBoundsInEveryWindow) {
  const Loaded& l = rules_support::load(test::data("hta_ddp_a100_nccl.json.gz"));
  static const std::regex line(R"(^([0-9.]+) (us|ms) gap \(([0-9.]+) (us|ms) of it dispatch, launch_bound's\))");
  const auto ns = [](const std::string& v, const std::string& unit) { return std::stod(v) * (unit == "ms" ? 1e6 : 1e3); };
  size_t lines = 0;
  for (auto [b, e] : l.windows) {
    const std::vector<RuleFinding> found = l.engine->detect(b, e);
    const RuleFinding* idle = rules_support::find_finding(found, "gpu_idle");
    if (idle == nullptr) continue;
    for (const std::string& ev : idle->evidence) {
      std::smatch m;
      if (!std::regex_search(ev, m, line)) continue;
      ++lines;
      EXPECT_NE(rules_support::find_finding(found, "launch_bound"), nullptr) << ev;
      EXPECT_LT(ns(m[3], m[4]), ns(m[1], m[2])) << ev;
    }
  }
  EXPECT_GT(lines, 0u);
}

}  // namespace
