// The GPU waiting on a copy's host side is the copy's for all of the call the user wrote
// (issue 12 item 1: what the host was doing during a window's GPU idle). A pageable upload
// `x.to(device)` spends time in aten::to and _to_copy (the destination's allocation, the
// dispatch) before its aten::copy_ issues the copy; pageable_memcpy claimed only the copy_,
// and the idle before it read gpu_idle "main thread in aten::to". Trace: the GPU workload
// zoo's R3D-18 inference on an H200 whose DataLoader does not pin memory, so each step's
// 768 KB input upload is pageable (tests/data/gpu_zoo/, scripts/dataset/make_gpu_zoo.py
// --seed 2026; label ranges from the dev manifest, in microseconds).
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

const char* kTrace = "gpu_zoo/gpuzoo_0047_r3d_18_inference.json.gz";

// The window holding `ts_us` (a time in the trace, microseconds).
const ttap::Window& window_at(const std::vector<ttap::Window>& windows, double ts_us) {
  const int64_t ts = static_cast<int64_t>(ts_us * 1000);
  for (const ttap::Window& w : windows)
    if (w.begin <= ts && ts < w.end) return w;
  return windows.front();
}

// The second step's upload: aten::to from +4690927968401.1 us, its copy_ only from
// +...968462.5, the 768 KB Memcpy HtoD (Pageable -> Device) at +...968674.7.
TEST(CopyCallRules, TheIdleInTheToBeforeItsCopyIsThePageableCopys) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data(kTrace));
  const std::vector<ttap::Window> windows = ttap::make_windows(l.trace, l.tree);
  const ttap::Window& w = window_at(windows, 4690927968430.0);
  ASSERT_LE(w.begin, static_cast<int64_t>(4690927968401.1 * 1000));
  const std::vector<ttap::RuleFinding> found = l.engine->detect(w.begin, w.end);
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found.front().id, "pageable_memcpy") << findings_text(found);
  const ttap::RuleFinding* copy = find_finding(found, "pageable_memcpy");
  ASSERT_NE(copy, nullptr) << findings_text(found);
  EXPECT_LE(copy->cost, w.end - w.begin) << findings_text(found);
  EXPECT_TRUE(evidence_has(*copy, "in the range in the calls that issue them and waits for them")) << findings_text(found);
  if (const ttap::RuleFinding* idle = find_finding(found, "gpu_idle")) {
    EXPECT_FALSE(evidence_has(*idle, "main thread in aten::to")) << findings_text(found);
  }
}

// cpu_bound_step names who runs the work; when no thread holds a culprit (the idle is all
// unprofiled code after a read), the line read "while  run CPU work that launches nothing".
TEST(CopyCallRules, UnprofiledWorkAfterAReadNamesTheHost) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data(kTrace));
  size_t seen = 0;
  for (const ttap::Window& w : ttap::make_windows(l.trace, l.tree)) {
    const std::vector<ttap::RuleFinding> found = l.engine->detect(w.begin, w.end);
    const ttap::RuleFinding* cpu = find_finding(found, "cpu_bound_step");
    if (cpu == nullptr || !evidence_has(*cpu, "with nothing profiled on the main thread after")) continue;
    ++seen;
    EXPECT_FALSE(evidence_has(*cpu, "while  run")) << findings_text(found);
    EXPECT_TRUE(evidence_has(*cpu, "while the host runs unprofiled CPU work that launches nothing") ||
                evidence_has(*cpu, " runs CPU work that launches nothing") ||
                evidence_has(*cpu, " run CPU work that launches nothing"))
        << findings_text(found);
  }
  EXPECT_GE(seen, 1u);
}

}  // namespace
