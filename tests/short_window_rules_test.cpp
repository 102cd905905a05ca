// Windows a few microseconds long inside an eager loop's launch gaps (issue 12 item 1): the
// window sees only GPU idle, with the host on its way to the launch that ends the gap, so
// the gap is judged by that launch even when it lands after the window. launch_bound and
// cast_churn were silent there (the gap did not end inside the window, and the window held
// no cast kernel to count). Traces: injector-2 val traces of SGLang's decode on an MI300X
// (tests/data/rules_x/README.md), windows cut as `ttap eval` cuts them (make_windows).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"
#include "ttap/windows.hpp"

namespace {

using ttap::rules_support::findings_text;
using ttap::rules_support::JudgedWindow;
using ttap::rules_support::Loaded;

// eval's windows that lie inside [b_us, e_us) (the manifest's microseconds), with the rules'
// findings there.
std::vector<JudgedWindow> windows_inside(const Loaded& l, double b_us, double e_us) {
  std::vector<JudgedWindow> out;
  const int64_t b = static_cast<int64_t>(b_us * 1000), e = static_cast<int64_t>(e_us * 1000);
  for (const ttap::Window& w : ttap::make_windows(l.trace, l.tree))
    if (w.begin >= b && w.end <= e) out.push_back({w.begin, w.end, l.engine->detect(w.begin, w.end)});
  return out;
}

// 20 elementwise ops (aten::add_, mul_, sub, where), each launching one 1.5-4 us kernel about
// every 15 us, written by inject2.py into model.py's decode_step; the labeled launch_bound
// range runs from 434104.048 to 434513.396 us, its loop after the offload round trip it
// holds (to 434227.348 us).
TEST(ShortWindowRules, WindowInsideAnEagerLoopsLaunchGapIsLaunchBound) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("rules_x/x_tracelens_sglang_decode_bs32_02.json.gz"));
  const std::vector<JudgedWindow> inside = windows_inside(l, 4909733434230.0, 4909733434513.0);
  ASSERT_GE(inside.size(), 30u);
  size_t launch_bound = 0;
  for (const JudgedWindow& w : inside) {
    ASSERT_FALSE(w.findings.empty()) << "silent on [" << w.begin << ", " << w.end << ")";
    const ttap::RuleFinding& f = w.findings.front();
    // An elementwise chain's links are launched one by one too: unfused_elementwise is the
    // more specific name for the same gaps where the ops chain on one tensor.
    EXPECT_TRUE(f.id == "launch_bound" || f.id == "unfused_elementwise") << findings_text(w.findings);
    EXPECT_LE(f.cost, w.end - w.begin) << findings_text(w.findings);
    launch_bound += f.id == "launch_bound";
  }
  EXPECT_GE(2 * launch_bound, inside.size());
}

// A loop of .half() casts (aten::to -> _to_copy -> copy_, one copy kernel each, about every
// 18 us) in model.py's cast_weights, after a nonzero() read; labeled cast_churn from
// 260273.264 to 260401.764 us.
TEST(ShortWindowRules, WindowInsideACastLoopsLaunchGapIsCastChurn) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("rules_x/x_tracelens_sglang_decode_bs32_01.json.gz"));
  const std::vector<JudgedWindow> inside = windows_inside(l, 4909733260276.0, 4909733260400.0);
  ASSERT_GE(inside.size(), 30u);
  // host_sync is labeled over the whole loop too (the nonzero() read before it drained the
  // queue, and the loop's kernels are too short to refill it): where the read's stall and
  // the loop explain the same idle, either may be named first, but cast_churn is always
  // found, and first in most windows.
  size_t cast_first = 0;
  for (const JudgedWindow& w : inside) {
    ASSERT_FALSE(w.findings.empty()) << "silent on [" << w.begin << ", " << w.end << ")";
    const auto cast = std::find_if(w.findings.begin(), w.findings.end(),
                                   [](const ttap::RuleFinding& f) { return f.id == "cast_churn"; });
    ASSERT_NE(cast, w.findings.end()) << findings_text(w.findings);
    const std::string& first = w.findings.front().id;
    EXPECT_TRUE(first == "cast_churn" || first == "host_sync") << findings_text(w.findings);
    cast_first += first == "cast_churn";
    const ttap::RuleFinding& f = *cast;
    EXPECT_LE(f.cost, w.end - w.begin) << findings_text(w.findings);
    bool says_loop = false;
    for (const std::string& e : f.evidence) says_loop = says_loop || e.find("launched one by one") != std::string::npos;
    EXPECT_TRUE(says_loop) << findings_text(w.findings);
  }
  EXPECT_GE(2 * cast_first, inside.size());
}

}  // namespace
