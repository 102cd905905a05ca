// Where layout_conversion's cost lies: the conversions' GPU time in the range and the launch gaps
// their launches end (gaps_caused_by), the helper redundant_copy, cast_churn and
// unfused_elementwise use. The finding had spans only where no conversion kernel ran in the range;
// elsewhere its extent was its kernels' events widened by hand to the first and last gap, and what
// reads the spans (the steady state's grouped finding, cost_in_graph_capture) saw none.
// Traces: the GPU workload zoo's diffusion UNet with a forward hook that makes each channels_last
// convolution's output NCHW again (gpuzoo_0011, tests/data/gpu_zoo/), and h200_twin's NCHW
// ResNet-50 on TF32 tensor cores (cuDNN's own transposes, no idle of theirs).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"
#include "ttap/analyze.hpp"

namespace {

using namespace ttap;
using rules_support::findings_text;
using rules_support::Loaded;

struct Counts {
  int windows = 0, whole = 0;  // windows with the finding; those whose spans hold all its cost
  int waits = 0;               // those whose cost holds GPU idle the conversions' launches end
};

// Every window's layout_conversion: spans inside the window whose extent is the finding's and
// whose sum is its cost, less only where a conversion kernel runs past the window's end.
Counts check_every_window(const Loaded& l) {
  Counts c;
  for (auto [b, e] : l.windows) {
    const std::vector<RuleFinding> found = l.engine->detect(b, e);
    const RuleFinding* f = rules_support::find_finding(found, "layout_conversion");
    if (f == nullptr) continue;
    ++c.windows;
    EXPECT_FALSE(f->spans.empty()) << findings_text({*f});
    if (f->spans.empty()) continue;
    EXPECT_GE(f->spans.front().first, b);
    EXPECT_LE(f->spans.back().second, e);
    EXPECT_EQ(f->begin, f->spans.front().first) << findings_text({*f});
    EXPECT_EQ(f->end, f->spans.back().second) << findings_text({*f});
    const int64_t held = total_length(f->spans);
    EXPECT_LE(held, f->cost) << findings_text({*f});
    bool past_end = false;
    for (EventId g : f->events) past_end = past_end || l.trace.end(g) > e;
    if (rules_support::evidence_has(*f, "ended by a memory-format conversion's kernel")) ++c.waits;
    if (held == f->cost) ++c.whole;
    else EXPECT_TRUE(past_end) << "spans " << held << " of cost " << f->cost << ": " << findings_text({*f});
  }
  return c;
}

// The hook's aten::contiguous copies end launch gaps: the spans hold that idle with the kernels.
// In 2 of the 15 windows a conversion kernel runs past the window's end (its time counted whole).
TEST(LayoutExtentRules, TheHooksConversionsHoldTheGapsTheyEnd) {
  const Counts c = check_every_window(rules_support::load(test::data("gpu_zoo/gpuzoo_0011_diffusion_unet_inference.json.gz")));
  EXPECT_EQ(c.windows, 15);
  EXPECT_EQ(c.whole, 13);
  EXPECT_GT(c.waits, 0);
}

// cuDNN's transposes end no gap of theirs (the host time before them is the convolution's
// dispatch): the spans are the kernels' time alone.
TEST(LayoutExtentRules, CudnnTransposesHoldTheirOwnTime) {
  const Counts c = check_every_window(rules_support::load(test::data("h200_twin/resnet50_h200_nw0.json.gz")));
  EXPECT_EQ(c.windows, 46);
  EXPECT_EQ(c.whole, 44);
  EXPECT_EQ(c.waits, 0);
}

}  // namespace
