// gpu_idle's fix follows what its gaps are made of (issue 12 item 0: fixes a user can act on).
// On hta_torchrec_a100_rank0 the first gpu_idle group's gaps lie inside the input dist's blocking
// copies ("the host in those gaps: 10.7 ms in synchronizing or allocator calls"), which neither
// host_sync nor alloc_churn takes, yet its fix sent the user to "unprofiled Python, waits on other
// processes or I/O". Where most of the idle is the host inside such calls, the fix now says so and
// names what usually blocks there.
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using namespace ttap;

TEST(IdleSyncFix, IdleInsideBlockingCallsIsNotSentToUnprofiledCode) {
  const auto& l = rules_support::load(test::data("hta_torchrec_a100_rank0.json.gz"));
  size_t blocking = 0;
  for (size_t w = 0; w < l.windows.size(); ++w) {
    const auto [b, e] = l.windows[w];
    const auto found = l.engine->detect(b, e);
    const RuleFinding* idle = rules_support::find_finding(found, "gpu_idle");
    if (idle == nullptr) continue;
    const bool in_calls = rules_support::evidence_has(*idle, "in synchronizing or allocator calls");
    if (!in_calls || idle->fix.find("synchronizing or allocator calls") == std::string::npos) continue;
    ++blocking;
    EXPECT_EQ(idle->fix.find("unprofiled Python"), std::string::npos) << idle->fix;
    EXPECT_NE(idle->fix.find("non_blocking=True"), std::string::npos) << idle->fix;
  }
  // The windows over the input dist's blocking copies (the first group's flagged windows among them).
  EXPECT_GE(blocking, 2u);
}

}  // namespace
