// Transfers named as the cause of the GPU idle they hold up (issue 12 items 0 and 1): a burst
// of scalar uploads keeps the GPU waiting while the host makes and copies one value after
// another, and that idle is small_transfers', not "GPU idle that no specific pattern
// explains"; a copy that starts late on a GPU that does nothing meanwhile did not wait behind
// a queue; and a range where the host is inside the `.to()` of an offload round trip, before
// its copy is issued, is the round trip's.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::find_finding;
using ttap::rules_support::evidence_has;
using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

// FCN-ResNet50 inference on an H200 (the GPU zoo's dev set): each step uploads 32 scalars one
// by one (`[torch.tensor(i / 32).to(device) for i in range(32)]`). Each upload is a 4-byte
// pageable copy: its aten::to holds the host ~220 us, the copy starting ~150 us after its
// cudaMemcpyAsync on an idle GPU, then ~25-100 us of making the next scalar. In the labeled
// burst's windows gpu_idle was named first ("main thread in aten::to"), and small_transfers
// counted that wait as "behind the launch queue".
TEST(CopyCauseRules, AScalarUploadBurstOwnsTheIdleItHoldsUp) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("gpu_zoo/gpuzoo_0009_fcn_resnet50_inference.json.gz"));
  // The manifest's second labeled range (us): the burst of the second profiled step.
  const int64_t lb = 4690847766705779, le = 4690847769699617;
  size_t judged = 0;
  for (auto [b, e] : l.windows) {
    if (b < lb || e > le) continue;  // windows wholly inside the burst
    ++judged;
    const auto found = l.engine->detect(b, e);
    ASSERT_FALSE(found.empty()) << "silent window inside the burst";
    EXPECT_EQ(found.front().id, "small_transfers") << findings_text(found);
    const ttap::RuleFinding* f = find_finding(found, "small_transfers");
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(evidence_has(*f, "while the host issues these copies one by one")) << findings_text(found);
    EXPECT_FALSE(evidence_has(*f, "behind the launch queue")) << findings_text(found);
    EXPECT_GT(f->cost, (e - b) / 2) << findings_text(found);
    EXPECT_LE(f->cost, e - b) << findings_text(found);
    // What is left to gpu_idle is the host's work after the burst (aten::stack of the values).
    if (const ttap::RuleFinding* idle = find_finding(found, "gpu_idle")) {
      EXPECT_LT(idle->cost, f->cost) << findings_text(found);
    }
  }
  EXPECT_GE(judged, 3u);
}

// SGLang decode on MI300X, an injector-2 crop (data/ttap-bench-x, val split): an activation
// goes to pinned host memory and comes back (454 KB each way). The GPU ran dry before the
// host entered the first aten::to; the host then spends ~6 us in aten::to and _to_copy
// before aten::copy_ issues the DtoH copy. The trace's 4.2 us windows there were silent:
// offload_pingpong judged copies that start, or whose copy_ runs, in the range.
TEST(CopyCauseRules, InsideTheToOfARoundTripBeforeItsCopy) {
  namespace fs = std::filesystem;
  const std::string path =
      std::string(TTAP_SOURCE_DIR) + "/data/ttap-bench-x/traces/x_tracelens_sglang_decode_bs32_02.json.gz";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is missing";
  const Loaded& l = ttap::rules_support::load(path);
  const ttap::Trace& t = l.trace;
  ttap::EventId to = ttap::kNoEvent, copy = ttap::kNoEvent;
  for (ttap::EventId e = 0; e < t.size() && copy == ttap::kNoEvent; ++e) {
    if (t.name_of(e) != "aten::to") continue;
    for (ttap::EventId c : l.tree.children(e))
      if (t.name_of(c) == "aten::_to_copy")
        for (ttap::EventId cc : l.tree.children(c))
          if (t.name_of(cc) == "aten::copy_") to = e, copy = cc;
  }
  ASSERT_NE(copy, ttap::kNoEvent);
  // From inside the .to() to copy_'s start.
  const auto found = l.engine->detect(t.ts[to] + 500, t.ts[copy]);
  ASSERT_FALSE(found.empty()) << "silent inside the .to()";
  EXPECT_EQ(found.front().id, "offload_pingpong") << findings_text(found);
  EXPECT_TRUE(evidence_has(found.front(), "Memcpy DtoH (Device -> Pinned) 454.2 KB (20 us) and back")) << findings_text(found);
  EXPECT_TRUE(evidence_has(found.front(), "while the host issues these copies and waits for them to land"))
      << findings_text(found);
  EXPECT_LE(found.front().cost, t.ts[copy] - t.ts[to] - 500) << findings_text(found);
}

// vLLM piecewise graph replay on MI300X, an injector-2 crop (data/ttap-bench-x, val split):
// 32 small uploads of 46 KB in all, one after another, each ending a GPU idle gap as it
// arrives. small_transfers and launch_bound both counted those gaps (676 us and 691 us of
// one 748 us window); the gaps are the copies', and launch_bound keeps only the others.
TEST(CopyCauseRules, LaunchBoundLeavesTheGapsTheSmallCopiesEnd) {
  namespace fs = std::filesystem;
  const std::string path =
      std::string(TTAP_SOURCE_DIR) + "/data/ttap-bench-x/traces/x_tracelens_vllm_piecewise_graph_execution_02.json.gz";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is missing";
  const Loaded& l = ttap::rules_support::load(path);
  size_t with_copies = 0;
  for (auto [b, e] : l.windows) {
    const auto found = l.engine->detect(b, e);
    const ttap::RuleFinding* copies = find_finding(found, "small_transfers");
    if (copies == nullptr || copies->cost < (e - b) / 2) continue;
    ++with_copies;
    const ttap::RuleFinding* launches = find_finding(found, "launch_bound");
    const int64_t both = copies->cost + (launches == nullptr ? 0 : launches->cost);
    EXPECT_LE(both, e - b) << findings_text(found);
    EXPECT_EQ(found.front().id, "small_transfers") << findings_text(found);
  }
  EXPECT_GE(with_copies, 1u);
}

}  // namespace
