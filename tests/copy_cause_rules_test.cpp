// Transfers named as the cause of the GPU idle they hold up (issue 12 items 0 and 1): a burst
// of scalar uploads keeps the GPU waiting while the host makes and copies one value after
// another, and that idle is small_transfers', not "GPU idle that no specific pattern
// explains"; a copy that starts late on a GPU that does nothing meanwhile did not wait behind
// a queue.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

const ttap::RuleFinding* find_id(const std::vector<ttap::RuleFinding>& v, const std::string& id) {
  for (const auto& f : v)
    if (f.id == id) return &f;
  return nullptr;
}

bool evidence_has(const ttap::RuleFinding& f, const std::string& text) {
  for (const auto& e : f.evidence)
    if (e.find(text) != std::string::npos) return true;
  return false;
}

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
    const ttap::RuleFinding* f = find_id(found, "small_transfers");
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(evidence_has(*f, "while the host issues these copies one by one")) << findings_text(found);
    EXPECT_FALSE(evidence_has(*f, "behind the launch queue")) << findings_text(found);
    EXPECT_GT(f->cost, (e - b) / 2) << findings_text(found);
    EXPECT_LE(f->cost, e - b) << findings_text(found);
    // What is left to gpu_idle is the host's work after the burst (aten::stack of the values).
    if (const ttap::RuleFinding* idle = find_id(found, "gpu_idle")) {
      EXPECT_LT(idle->cost, f->cost) << findings_text(found);
    }
  }
  EXPECT_GE(judged, 3u);
}

}  // namespace
