// alloc_churn judged from inside torch.cuda.empty_cache (issue 12 item 1): a range the host
// spends in one of the hipFree calls that empty_cache makes, while the GPU idles, is the
// allocator's, though that one call is shorter than the 100 us a lone allocator call needs.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
using ttap::rules_support::evidence_has;
using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

// vLLM's piecewise graph capture on MI300X, an injector-2 crop (data/ttap-bench-x, val split):
// torch.cuda.empty_cache() (741 us) frees blocks one hipFree at a time; the last, 96 us, runs
// alone while the GPU waits. Windows inside it were gpu_idle's ("main thread in
// vllm/compilation/cuda_graph.py(208): __call__"), since alloc_churn counted an empty_cache
// only from the range it began in and needed two allocator calls or one of 100 us.
TEST(EmptyCacheRules, ARangeInsideEmptyCachesFreeIsTheAllocators) {
  const std::string path =
      std::string(TTAP_SOURCE_DIR) + "/data/ttap-bench-x/traces/x_tracelens_vllm_piecewise_capture_07.json.gz";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is missing";
  const Loaded& l = ttap::rules_support::load(path);
  const ttap::Trace& t = l.trace;
  // The last hipFree inside the empty_cache frame.
  ttap::EventId cache = ttap::kNoEvent, last_free = ttap::kNoEvent;
  for (ttap::EventId e = 0; e < t.size(); ++e)
    if (t.name_of(e).find("empty_cache") != std::string_view::npos && t.dur[e] > 500'000) cache = e;
  ASSERT_NE(cache, ttap::kNoEvent);
  for (ttap::EventId e = 0; e < t.size(); ++e)
    if (t.name_of(e) == "hipFree" && t.ts[e] >= t.ts[cache] && t.end(e) <= t.end(cache) &&
        (last_free == ttap::kNoEvent || t.ts[e] > t.ts[last_free]))
      last_free = e;
  ASSERT_NE(last_free, ttap::kNoEvent);
  ASSERT_LT(t.dur[last_free], 100'000);
  const int64_t b = t.ts[last_free] + 10'000, e = t.end(last_free) - 10'000;
  const auto found = l.engine->detect(b, e);
  ASSERT_FALSE(found.empty()) << "silent inside empty_cache's hipFree";
  EXPECT_EQ(found.front().id, "alloc_churn") << findings_text(found);
  EXPECT_TRUE(evidence_has(found.front(), "torch.cuda.empty_cache runs in the range after warm-up (1 call)"))
      << findings_text(found);
  EXPECT_GT(found.front().cost, (e - b) / 2) << findings_text(found);
  EXPECT_LE(found.front().cost, e - b) << findings_text(found);
  for (const auto& f : found) EXPECT_NE(f.id, "gpu_idle") << findings_text(found);
}

}  // namespace
