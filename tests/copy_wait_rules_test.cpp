// A range inside a small copy's long wait (issue 12 item 1: host spans crossing a range's
// edges, with their whole length). A pageable host-to-device copy of a few bytes returns only
// once the work queued before it is done, so the host can sit in its aten::copy_ for tens of
// milliseconds while the GPU works off the queue, launching nothing. The windows inside that
// wait were silent: small_transfers counted copies only in the 1 ms around the range, and the
// burst the waiting copy belongs to starts after it. Trace: an injector-2 val trace of vLLM's
// graph execution on an MI300X (tests/data/rules_x/README.md), windows cut as `ttap eval`
// cuts them (make_windows).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"
#include "ttap/windows.hpp"

namespace {

using ttap::rules_support::evidence_has;
using ttap::rules_support::find_finding;
using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

// train.py's build_targets makes 34 small tensors on the CPU and copies each up
// (torch.tensor(...) -> aten::to -> copy_, pageable HtoD copies of 4 B to 8 KB). The first
// copy's aten::copy_ runs from 6520488811438.6 to 6520488875556.2 us, waiting 64 ms for the
// kernels queued before it; its copy and the burst's other 33 start after it returns.
constexpr double kWaitBeginUs = 6520488811438.6, kWaitEndUs = 6520488875556.2;

TEST(CopyWaitRules, RangeInsideASmallCopysWaitIsItsBurst) {
  const Loaded& l =
      ttap::rules_support::load(ttap::test::data("rules_x/x_tracelens_vllm_piecewise_graph_execution_02.json.gz"));
  const int64_t wb = static_cast<int64_t>(kWaitBeginUs * 1000), we = static_cast<int64_t>(kWaitEndUs * 1000);
  size_t inside = 0;
  for (const ttap::Window& w : ttap::make_windows(l.trace, l.tree)) {
    const std::vector<ttap::RuleFinding> findings = l.engine->detect(w.begin, w.end);
    if (w.begin >= wb && w.end <= we) {
      ++inside;
      ASSERT_FALSE(findings.empty()) << "silent on [" << w.begin << ", " << w.end << ")";
      const ttap::RuleFinding& f = findings.front();
      EXPECT_EQ(f.id, "small_transfers") << findings_text(findings);
      // The wait is said with its whole length, and what it waits for.
      EXPECT_TRUE(evidence_has(f, "the host is in aten::copy_ of 64.1 ms across the range")) << findings_text(findings);
      EXPECT_TRUE(evidence_has(f, "behind the launch queue")) << findings_text(findings);
      EXPECT_TRUE(evidence_has(f, "while the GPU works off what was queued before")) << findings_text(findings);
      // The GPU works throughout: the wait costs the range no GPU time, so the cost is the
      // host's own time in the copy ops there, at most the range.
      EXPECT_LE(f.cost, w.end - w.begin) << findings_text(findings);
      EXPECT_GE(f.events.size(), 8u) << findings_text(findings);
    } else if (w.end < wb - 1'000'000) {
      // Before the burst's first call the host makes no copies: nothing to judge.
      EXPECT_EQ(find_finding(findings, "small_transfers"), nullptr) << findings_text(findings);
    }
  }
  // 748 us windows over a 64 ms wait.
  EXPECT_GE(inside, 80u);
}

}  // namespace
