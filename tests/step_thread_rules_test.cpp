// cpu_bound_step reads the training loop's own thread too (issue 12 item 1): in DDP training
// the autograd thread launches the backward, so it launches the most kernels and is the rules'
// main thread, while the loop's host work (DDP's buffer handling, the user's metrics, the
// optimizer's Python) runs on the thread that holds the ProfilerStep spans. GPU idle while
// that thread runs ops that launch nothing is CPU-bound time, not unexplained idle.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

// The first event named `name` on the thread that holds the ProfilerStep spans.
ttap::EventId on_step_thread(const Loaded& l, std::string_view name) {
  const ttap::Trace& t = l.trace;
  const ttap::TrackId st = t.track[l.tree.steps().front().event];
  for (ttap::EventId e = 0; e < t.size(); ++e)
    if (t.track[e] == st && t.name_of(e) == name) return e;
  return ttap::kNoEvent;
}

// HTA's DDP trace (tests/data, real): the loop thread's 15.1 ms aten::unflatten_dense_tensors
// (unflattening coalesced tensors, as DDP does for its buckets and buffers) runs while the
// GPU has nothing queued; the rules read only the autograd thread there and called that
// idle unexplained (gpu_idle).
TEST(StepThreadRules, LoopThreadWorkInAnIdleGapIsCpuBound) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("hta_ddp_a100_nccl.json.gz"));
  const ttap::Trace& t = l.trace;
  ASSERT_FALSE(l.tree.steps().empty());
  ttap::EventId u = ttap::kNoEvent;
  for (ttap::EventId e = 0; e < t.size(); ++e)
    if (t.name_of(e) == "aten::unflatten_dense_tensors" && t.dur[e] > 10'000'000 &&
        t.track[e] == t.track[l.tree.steps().front().event])
      u = e;
  ASSERT_NE(u, ttap::kNoEvent) << "the 15.1 ms call on the loop thread";
  // A 2 ms range in the middle of the call: the GPU is idle there (checked: the range holds
  // no GPU activity), so its first finding must name the call as what the host did.
  const int64_t mid = t.ts[u] + t.dur[u] / 2, b = mid - 1'000'000, e = mid + 1'000'000;
  for (ttap::EventId g = 0; g < t.size(); ++g) {
    if (ttap::is_gpu_activity(t.category[g])) {
      ASSERT_FALSE(t.ts[g] < e && t.end(g) > b) << "GPU busy in the range";
    }
  }
  const auto found = l.engine->detect(b, e);
  ASSERT_FALSE(found.empty());
  const ttap::RuleFinding& f = found.front();
  EXPECT_EQ(f.id, "cpu_bound_step") << findings_text(found);
  EXPECT_LE(f.cost, e - b);
  ASSERT_GE(f.evidence.size(), 2u) << findings_text(found);
  EXPECT_EQ(f.evidence[0], "GPU idle 2.00 ms (100% of the range) in 1 gap of at least 200 us while the training loop's "
                           "thread (not the one that launches most) runs CPU work that launches nothing")
      << findings_text(found);
  EXPECT_EQ(f.evidence[1], "2.00 ms of that idle inside aten::unflatten_dense_tensors (one 15.1 ms call)") << findings_text(found);
}

// An injector-2 train trace of the same DDP job (data/ttap-bench-x, train split): host
// statistics (update_stats -> aten::histc, 17.9 ms) on the loop thread inside the optimizer
// step, after the GPU's last work of the step. The ranges inside that call name it.
TEST(StepThreadRules, StatisticsOnTheLoopThreadNameCpuBound) {
  const std::string path = std::string(TTAP_SOURCE_DIR) + "/data/ttap-bench-x/traces/x_hta_ddp_a100_nccl_06.json.gz";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is missing";
  const Loaded& l = ttap::rules_support::load(path);
  const ttap::Trace& t = l.trace;
  const ttap::EventId u = on_step_thread(l, "update_stats");
  ASSERT_NE(u, ttap::kNoEvent);
  size_t judged = 0;
  for (auto [b, e] : l.windows) {
    if (b < t.ts[u] || e > t.end(u)) continue;
    ++judged;
    const auto found = l.engine->detect(b, e);
    ASSERT_FALSE(found.empty()) << b;
    EXPECT_EQ(found.front().id, "cpu_bound_step") << findings_text(found);
    EXPECT_NE(found.front().fix.find("move update_stats off the step path"), std::string::npos) << findings_text(found);
  }
  EXPECT_GE(judged, 5u);
}

// A corpus trace of HTA's DDP CNN (data/ttap-bench, val split; a surgery crop with an
// exposed all-reduce): the loop thread waits 92.9 ms in aten::wait on the collective while the
// GPU idles. That wait is the other ranks' and the collective's, not CPU work: no range inside
// it is cpu_bound_step (when the loop thread was first read, it said "inside aten::wait").
TEST(StepThreadRules, AWaitOnACollectiveIsNotCpuWork) {
  const std::string path = std::string(TTAP_SOURCE_DIR) + "/data/ttap-bench/traces/surgery_0002_hta_ddp_cnn_v100_nsres.json.gz";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is missing";
  const Loaded& l = ttap::rules_support::load(path);
  const ttap::Trace& t = l.trace;
  ttap::EventId wait = ttap::kNoEvent;
  for (ttap::EventId e = 0; e < t.size(); ++e)
    if (t.name_of(e) == "aten::wait" && (wait == ttap::kNoEvent || t.dur[e] > t.dur[wait])) wait = e;
  ASSERT_NE(wait, ttap::kNoEvent);
  ASSERT_GT(t.dur[wait], 90'000'000);
  size_t judged = 0;
  for (auto [b, e] : l.windows) {
    if (b < t.ts[wait] || e > t.end(wait)) continue;
    ++judged;
    for (const auto& f : l.engine->detect(b, e)) EXPECT_NE(f.id, "cpu_bound_step") << findings_text({f});
  }
  EXPECT_GE(judged, 10u);
}

}  // namespace
