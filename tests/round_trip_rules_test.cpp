// offload_pingpong owns the wait of its round trip (issue 12 item 1): the sync under
// tensor.cpu() / .cuda() that waits for a large copy to land, and the GPU idle after it
// until the host launches again, are the round trip's, not host_sync's (the fix is not to
// move the tensor, not to read a scalar later). Fixture: tests/data/rules/
// vit_nsfw_h100_offload_pingpong.json.gz (a real ViT trace with a 128 MB round trip written
// in by surgery.py; tests/data/rules/README.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::evidence_has;
using ttap::rules_support::Loaded;

using ttap::rules_support::findings_text;

TEST(RoundTripRules, TheRoundTripsSyncsAndIdleAreOffloadPingpongs) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("rules/vit_nsfw_h100_offload_pingpong.json.gz"));
  size_t waiting = 0, idle_after = 0, offload = 0;
  for (auto [b, e] : l.windows) {
    const auto found = l.engine->detect(b, e);
    for (const auto& f : found) {
      // The trace's only synchronizing calls are the round trip's two.
      EXPECT_NE(f.id, "host_sync") << findings_text(found);
      if (f.id != "offload_pingpong") continue;
      ++offload;
      EXPECT_EQ(&f, &found.front()) << findings_text(found);
      waiting += evidence_has(f, "the host waits in cudaStreamSynchronize of 5.95 ms across the range (");
      idle_after += evidence_has(f, "in the range while the host issues these copies and waits for them to land, until it launches again");
      EXPECT_LE(f.cost, e - b);
    }
  }
  // Each 5.95 ms copy spans about 30 of the 100 windows; the sync waits through them all.
  EXPECT_GE(offload, 55u);
  EXPECT_GE(waiting, 55u);
  EXPECT_GE(idle_after, 1u);
}

}  // namespace
