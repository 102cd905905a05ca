// GPU idle while the host still waits in a synchronizing call after the queue ran dry is the
// call's (issue 12 item 1): host_sync counted the idle from the call's return (less the
// idle-queue latency) only, as if the GPU worked off its queue the whole time. A sync the
// host enters with the GPU already idle holds the host for its whole length with nothing
// to run, and the next launch waits for it: all of that idle is the sync's. Trace: vLLM's
// piecewise CUDA-graph capture on MI300X (tests/data, real), whose capture loop calls
// hipDeviceSynchronize (20-23 us) between captures while the GPU has nothing queued.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

TEST(DrainedSyncRules, ASyncEnteredWithTheGpuIdleCostsItsWholeLength) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("tracelens_vllm_piecewise_capture.json.gz"));
  const ttap::Trace& t = l.trace;
  std::vector<std::pair<int64_t, int64_t>> gpu;
  for (ttap::EventId e = 0; e < t.size(); ++e)
    if (ttap::is_gpu_activity(t.category[e])) gpu.emplace_back(t.ts[e], t.end(e));
  size_t judged = 0;
  for (ttap::EventId s = 0; s < t.size(); ++s) {
    if (t.name_of(s) != "hipDeviceSynchronize" || t.dur[s] < 20'000 || t.ts[s] < l.begin || t.end(s) > l.end) continue;
    const int64_t b = t.ts[s], e = t.end(s);
    if (std::any_of(gpu.begin(), gpu.end(), [&](auto g) { return g.first < e && g.second > b; })) continue;
    ++judged;
    const auto found = l.engine->detect(b, e);
    const auto it = std::find_if(found.begin(), found.end(), [](const auto& f) { return f.id == "host_sync"; });
    ASSERT_NE(it, found.end()) << findings_text(found);
    EXPECT_EQ(it->cost, e - b) << findings_text(found);
    EXPECT_NE(it->evidence.front().find("once the queue ran dry (100% of the range)"), std::string::npos)
        << findings_text(found);
  }
  EXPECT_GE(judged, 3u);
}

}  // namespace
