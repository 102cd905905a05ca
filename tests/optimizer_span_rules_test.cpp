// optimizer_single_tensor judges a loop-like optimizer step whole (issue 12 item 1): a range
// inside the step sees a few of its per-parameter kernels, too few to tell a loop from a
// batched update, though the step is the range's cause. Real traces from tests/data.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

// The longest event named `name`.
ttap::EventId longest(const ttap::Trace& t, std::string_view name) {
  ttap::EventId best = ttap::kNoEvent;
  for (ttap::EventId e = 0; e < t.size(); ++e)
    if (t.name_of(e) == name && (best == ttap::kNoEvent || t.dur[e] > t.dur[best])) best = e;
  return best;
}

// PARAM's DLRM rank 0: Adagrad's step launches 64 per-parameter kernels (sqrt, addcmul_,
// addcdiv_ per parameter) over 1.4 ms; every ~145 us range inside it holds fewer than the 24
// a range needed, and named nothing of it.
TEST(OptimizerSpanRules, ARangeInsideAPerParameterStepNamesIt) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("param_dlrm_v100_8ranks/rank0.json.gz"));
  const ttap::Trace& t = l.trace;
  const ttap::EventId step = longest(t, "Optimizer.step#Adagrad.step");
  ASSERT_NE(step, ttap::kNoEvent);
  size_t judged = 0;
  for (auto [b, e] : l.windows) {
    if (b < t.ts[step] || e > t.end(step)) continue;
    ++judged;
    const auto found = l.engine->detect(b, e);
    const auto it = std::find_if(found.begin(), found.end(), [](const auto& f) { return f.id == "optimizer_single_tensor"; });
    ASSERT_NE(it, found.end()) << findings_text(found);
    EXPECT_LE(it->cost, e - b);
    EXPECT_NE(it->evidence.front().find(") ran 64 kernels, 0 of them multi-tensor (foreach/fused)"), std::string::npos)
        << findings_text(found);
    EXPECT_NE(it->fix.find("torch.optim.Adagrad(..., foreach=True)"), std::string::npos) << it->fix;
  }
  EXPECT_GE(judged, 5u);
}

// HTA's sampled rank 0: a 190 ms Shampoo step launches 31 kernels amid other work (its calls
// take 0.2% of it). Not a loop of launches: a range is judged by the kernels in it, and the
// ranges holding few of them name no per-parameter loop.
TEST(OptimizerSpanRules, AStepThatLaunchesLittleIsJudgedByTheRange) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("hta_sampled_rank0.json.gz"));
  const ttap::Trace& t = l.trace;
  const ttap::EventId step = longest(t, "Optimizer.step#Shampoo.step");
  ASSERT_NE(step, ttap::kNoEvent);
  size_t judged = 0;
  for (auto [b, e] : l.windows) {
    if (b < t.ts[step] || e > t.end(step)) continue;
    size_t launches = 0;
    for (ttap::EventId g = 0; g < t.size(); ++g) {
      if (!ttap::is_gpu_activity(t.category[g])) continue;
      const ttap::EventId c = l.tree.launcher(g);
      launches += c != ttap::kNoEvent && t.ts[c] >= b && t.ts[c] < e && t.track[c] == t.track[step];
    }
    if (launches >= 24) continue;
    ++judged;
    for (const auto& f : l.engine->detect(b, e)) EXPECT_NE(f.id, "optimizer_single_tensor") << findings_text({f});
  }
  EXPECT_GE(judged, 10u);
}

}  // namespace
