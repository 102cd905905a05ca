// A long GPU idle gap inside a loop of the pattern's own launches (issue 12 item 1, causal
// rules, eighth round): a gap that ends as a dtype cast's, an elementwise link's or a layout
// conversion's kernel arrives was that pattern's only when it was short, or when the host
// spent it in the op that launched the arriving kernel. A long one between two of the
// pattern's launches, with nothing else recorded on the host between their calls, is the
// code between them (the loop's Python), and the pattern keeps the GPU waiting there.
// Traces: the GPU workload zoo's diffusion UNet inference recasting every weight to fp16 and
// back each step (gpuzoo_0011, tests/data/gpu_zoo/, make_gpu_zoo.py --seed 2026; the label
// range from the dev manifest, in microseconds), and tracelens_qwen05b_h100 (public).
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using namespace ttap;
using rules_support::Loaded;
using rules_support::window_text;

const char kBetween[] = "between two of these casts with nothing else recorded on the host between their calls";

// The second step's recast (cast_churn labeled 4690852288805.067 to 4690852295859.589 us):
// after the fp16 copies, the host records nothing for 554 us before the first copy back to
// fp32; the GPU idles throughout. The 397 us window inside that gap read gpu_idle ("main
// thread in aten::to for 38 us of it").
TEST(LoopGapRules, IdleBetweenTwoCastsOfTheLoopIsCastChurn) {
  const Loaded& l = rules_support::load(test::data("gpu_zoo/gpuzoo_0011_diffusion_unet_inference.json.gz"));
  const int64_t in_gap = static_cast<int64_t>(4690852295000.0 * 1000);
  const TraceReport r = rules_support::analyze_all_windows(l);
  const FlaggedWindow* w = rules_support::flagged_window_at(r, in_gap);
  ASSERT_NE(w, nullptr);
  ASSERT_FALSE(w->findings.empty());
  const Finding& first = w->findings.front();
  EXPECT_EQ(first.id, "cast_churn") << window_text(*w);
  EXPECT_LE(first.cost, w->end - w->begin) << window_text(*w);
  bool line = false;
  for (const std::string& e : first.evidence) line = line || e.find(kBetween) != std::string::npos;
  EXPECT_TRUE(line) << window_text(*w);
}

// With with_stack the profiler records the Python between two casts: in Qwen2's forward the
// rotary embedding's last cast and the first decoder layer's are 243 us apart while the
// model slices its ModuleList (container.py's __getitem__ building a new one). That is the
// model's code, not a cast loop's, so the gap is not cast_churn's.
TEST(LoopGapRules, RecordedCodeBetweenTheCastsKeepsTheGapOut) {
  const Loaded& l = rules_support::load(test::data("tracelens_qwen05b_h100.json.gz"));
  std::vector<std::pair<int64_t, int64_t>> ranges = l.windows;
  ranges.emplace_back(l.begin, l.end);
  for (auto [b, e] : ranges)
    for (const RuleFinding& f : l.engine->detect(b, e))
      EXPECT_FALSE(rules_support::evidence_has(f, "between two of these")) << rules_support::findings_text({f});
}

}  // namespace
