// offload_pingpong shows where its cost lies (issue 12 item 0: costs inside their window).
// It took its extent from its events, the large copies of the round trip, before it filled its
// spans (the copies' time in the range and the GPU idle the round trip causes there): a 198 us
// window of the rules fixture vit_nsfw_h100_offload_pingpong read offload_pingpong across 6 ms,
// the whole copies; gpuzoo_0058's 6.1 ms window across 38 ms.
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using namespace ttap;

void expect_inside_windows(const std::string& fixture) {
  const rules_support::Loaded& l = rules_support::load(test::data(fixture));
  size_t found = 0;
  for (auto [b, e] : l.windows)
    for (const RuleFinding& f : l.engine->detect(b, e)) {
      if (f.id != "offload_pingpong") continue;
      ++found;
      EXPECT_GE(f.begin, b) << fixture << " " << rules_support::findings_text({f});
      EXPECT_LE(f.end, e) << fixture << " " << rules_support::findings_text({f});
      // Its extent is its spans': where its cost lies, no wider.
      ASSERT_FALSE(f.spans.empty()) << fixture;
      EXPECT_EQ(f.begin, f.spans.front().first) << fixture;
      EXPECT_EQ(f.end, f.spans.back().second) << fixture;
    }
  EXPECT_GT(found, 0u) << fixture;
}

TEST(PingpongSpan, RoundTripShowsInsideItsWindow) {
  expect_inside_windows("rules/vit_nsfw_h100_offload_pingpong.json.gz");
  expect_inside_windows("gpu_zoo/gpuzoo_0058_maskrcnn_resnet50_fpn_train.json.gz");
}

}  // namespace
