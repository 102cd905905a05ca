// Copies of a copy, launched one by one (issue 12 item 1, causal rules, ninth round): a
// device copy made by aten::clone / aten::contiguous right after a device copy of the same
// size, with nothing else run on the GPU between them, is the step copying what it has just
// copied. On a fast GPU each such copy takes a microsecond and its dispatch tens, so the GPU
// idle that ends as such a copy's launch arrives is what the copies cost; redundant_copy
// counted only copies of at least 1 MB by their GPU time, so the idle went to launch_bound or
// to no finding at all.
// Traces: the GPU workload zoo's RetinaNet inference copying each input image four times over
// (gpuzoo_0070) and its diffusion UNet (gpuzoo_0011), both in tests/data/gpu_zoo/
// (make_gpu_zoo.py --seed 2026; label ranges from the dev manifest, in microseconds), and
// hta_ddp_a100_nccl (public).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"
#include "ttap/analyze.hpp"

namespace {

using namespace ttap;
using rules_support::Loaded;
using rules_support::window_text;

const char kIdleLine[] = "as soon as such a copy's launch arrives";

const Finding* finding_of(const FlaggedWindow& w, const std::string& id) {
  for (const Finding& f : w.findings)
    if (f.id == id) return &f;
  return nullptr;
}

// The first step's copies (redundant_copy labeled 4690975256407.361 to 4690975257389.037 us):
// x.clone(), .transpose(-1, -2).contiguous() twice and .clone().detach() for each of two
// 588 KB images, 1.2-2.5 us of copying each behind 40-80 us of dispatch. The window over them
// read gpu_idle alone (its two long gaps), the ~300 us of short gaps the copies end in no
// finding.
TEST(RecopyRules, CopiesOfACopyTakeTheGapsTheyEnd) {
  const Loaded& l = rules_support::load(test::data("gpu_zoo/gpuzoo_0070_retinanet_resnet50_fpn_inference.json.gz"));
  const int64_t in_copies = static_cast<int64_t>(4690975257100.0 * 1000);
  const TraceReport r = rules_support::analyze_all_windows(l);
  const FlaggedWindow* w = rules_support::flagged_window_at(r, in_copies);
  ASSERT_NE(w, nullptr);
  const Finding* copy = finding_of(*w, "redundant_copy");
  ASSERT_NE(copy, nullptr) << window_text(*w);
  EXPECT_GE(copy->cost, 250'000) << window_text(*w);
  EXPECT_LE(copy->cost, w->end - w->begin) << window_text(*w);
  bool line = false;
  for (const std::string& e : copy->evidence) line = line || e.find(kIdleLine) != std::string::npos;
  EXPECT_TRUE(line) << window_text(*w);
  // The long gaps before and after the copies are no copy's: gpu_idle keeps them.
  const Finding* idle = finding_of(*w, "gpu_idle");
  ASSERT_NE(idle, nullptr) << window_text(*w);
  EXPECT_GE(idle->cost, 500'000) << window_text(*w);
}

// The second step's copies in the UNet (labeled 4690852288508.628 to 4690852288920.106 us,
// 1.7 MB copies): launch_bound had taken the gaps they end (an error ahead of them); now they
// are the copies' and launch_bound is left with none in that window.
TEST(RecopyRules, LaunchBoundLeavesTheCopiesGaps) {
  const Loaded& l = rules_support::load(test::data("gpu_zoo/gpuzoo_0011_diffusion_unet_inference.json.gz"));
  const int64_t in_copies = static_cast<int64_t>(4690852288700.0 * 1000);
  const TraceReport r = rules_support::analyze_all_windows(l);
  const FlaggedWindow* w = rules_support::flagged_window_at(r, in_copies);
  ASSERT_NE(w, nullptr);
  const Finding* copy = finding_of(*w, "redundant_copy");
  ASSERT_NE(copy, nullptr) << window_text(*w);
  EXPECT_GE(copy->cost, 100'000) << window_text(*w);
  const Finding* launch = finding_of(*w, "launch_bound");
  EXPECT_TRUE(launch == nullptr || launch->cost < copy->cost) << window_text(*w);
}

// Where the copies' cost lies is what the finding's spans say: the copies' time in the window
// and the launch gaps they end, as for cast_churn's casts launched one by one. The finding had no
// spans (its extent was the copies' events widened by hand to the first and last gap), so what
// reads them (the steady state's grouped finding, cost_in_graph_capture) saw the copies' own GPU
// time only, not the 303 us of idle that is most of the 317 us it costs in gpuzoo_0070's first
// window.
TEST(RecopyRules, TheCostLiesInTheCopiesAndTheGapsTheyEnd) {
  const Loaded& l = rules_support::load(test::data("gpu_zoo/gpuzoo_0070_retinanet_resnet50_fpn_inference.json.gz"));
  int windows = 0;
  for (auto [b, e] : l.windows) {
    const std::vector<RuleFinding> found = l.engine->detect(b, e);
    const RuleFinding* copy = rules_support::find_finding(found, "redundant_copy");
    if (copy == nullptr) continue;
    ++windows;
    ASSERT_FALSE(copy->spans.empty()) << rules_support::findings_text({*copy});
    EXPECT_EQ(total_length(copy->spans), copy->cost) << rules_support::findings_text({*copy});
    EXPECT_GE(copy->spans.front().first, b);
    EXPECT_LE(copy->spans.back().second, e);
    EXPECT_EQ(copy->begin, copy->spans.front().first);
    EXPECT_EQ(copy->end, copy->spans.back().second);
  }
  EXPECT_EQ(windows, 2);  // the two steps' copies
}

// DDP copies each gradient into its bucket with copy_ (no clone), same-size copies back to
// back: those are not copies of a copy, and no window of the public DDP trace says so.
TEST(RecopyRules, BucketCopiesAreNoCopiesOfACopy) {
  const Loaded& l = rules_support::load(test::data("hta_ddp_a100_nccl.json.gz"));
  std::vector<std::pair<int64_t, int64_t>> ranges = l.windows;
  ranges.emplace_back(l.begin, l.end);
  for (auto [b, e] : ranges)
    for (const RuleFinding& f : l.engine->detect(b, e))
      EXPECT_FALSE(rules_support::evidence_has(f, kIdleLine)) << rules_support::findings_text({f});
}

}  // namespace
