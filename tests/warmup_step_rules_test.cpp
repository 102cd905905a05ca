// Which first step is warm-up (issue 12 item 1): the rules left the GPU idle of the first of
// several steps unjudged, as warm-up. A profiler schedule's warmup phase usually leaves the
// first recorded step as long as the others, and then it is steady state like them (every
// public trace with several steps but kineto's nw4 run, whose DataLoader workers start in a
// 181.6 ms first step against ~126 ms). Real traces from tests/data.
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::Loaded;

// Windows inside step `k` (0-based) whose findings include gpu_idle or cpu_bound_step.
size_t idle_windows_in_step(const Loaded& l, size_t k) {
  const ttap::Step& s = l.tree.steps().at(k);
  size_t n = 0;
  for (auto [b, e] : l.windows) {
    if (b < s.ts || e > s.end) continue;
    for (const auto& f : l.engine->detect(b, e))
      if (f.id == "gpu_idle" || f.id == "cpu_bound_step") {
        ++n;
        break;
      }
  }
  return n;
}

// HTA's sampled rank 0: two steps of 607 and 623 ms, the same work with the same idle gaps.
// Both are judged: the first step's windows report their idle as the second's do (before,
// 1 window against 34).
TEST(WarmupStepRules, AFirstStepAsLongAsTheOthersIsSteadyState) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("hta_sampled_rank0.json.gz"));
  ASSERT_EQ(l.tree.steps().size(), 2u);
  const size_t first = idle_windows_in_step(l, 0), second = idle_windows_in_step(l, 1);
  ASSERT_GE(second, 20u);
  EXPECT_GE(2 * first, second) << first << " windows in step 1, " << second << " in step 2";
}

// kineto's nw4 run: its first step is 1.44x the later median, the workers warming up; its
// idle stays unjudged.
TEST(WarmupStepRules, AFirstStepMuchLongerThanTheOthersIsWarmup) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("kineto_resnet50_v100_nw4.json.gz"));
  ASSERT_EQ(l.tree.steps().size(), 6u);
  EXPECT_EQ(idle_windows_in_step(l, 0), 0u);
  EXPECT_GT(idle_windows_in_step(l, 1) + idle_windows_in_step(l, 4), 0u) << "the later steps do show idle";
}

}  // namespace
