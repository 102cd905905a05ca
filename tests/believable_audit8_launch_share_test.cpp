// The headline's launch line says "N launches: P% of kernels shorter than their launch call"
// (audit8, scripts/audit/check_numbers.py). P was the short kernels over every launched GPU
// event, copies and memsets included, which are never counted short: on
// tracelens_vllm_b200_eager, 500 of its 768 launched kernels (65.1%) run shorter than their
// launch call, and the headline read 53.8% (500 of 929 launches). P is now of the kernels.
#include <gtest/gtest.h>

#include <string>

#include "../src/classify/classify.hpp"
#include "rules_support.hpp"
#include "suite_support.hpp"

namespace {

using namespace ttap;

// Kernels with a launch call in the trace, and those shorter than it: counted from the
// events, over the whole trace (this trace's GPU activity is its scope).
struct KernelCounts {
  int64_t launched = 0, short_ones = 0, other_launches = 0;
};

KernelCounts count_kernels(const Trace& t, const EventTree& tree) {
  KernelCounts c;
  for (EventId g : tree.gpu_events()) {
    const EventId l = tree.launcher(g);
    if (l == kNoEvent) continue;
    if (t.category[g] != Category::Kernel) {
      ++c.other_launches;
      continue;
    }
    ++c.launched;
    c.short_ones += t.dur[g] < t.dur[l];
  }
  return c;
}

TEST(HeadlineLaunchShare, IsAShareOfTheKernels) {
  const auto& l = rules_support::load(suite::data_path("tracelens_vllm_b200_eager.json.gz"));
  const KernelCounts c = count_kernels(l.trace, l.tree);
  ASSERT_EQ(c.launched, 768);
  ASSERT_EQ(c.short_ones, 500);
  ASSERT_GT(c.other_launches, 0) << "the trace's copies and memsets make the two shares differ";
  const Headline h = make_headline(l.trace, l.tree);
  EXPECT_EQ(h.launches, c.launched + c.other_launches);
  EXPECT_NEAR(h.short_kernel_share, 500.0 / 768.0, 1e-9);

  TraceReport r;
  r.headline = h;
  bool found = false;
  for (const std::string& line : headline_lines(r))
    if (line.find("launches: ") != std::string::npos) {
      found = true;
      EXPECT_NE(line.find("929 launches: 65.1% of kernels shorter than their launch call"), std::string::npos) << line;
    }
  EXPECT_TRUE(found);
}

}  // namespace
