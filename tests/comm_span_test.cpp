// comm_not_overlapped shows where its cost lies (issue 12 item 0: costs inside their window, the
// shared set_span path). It clipped its collectives' kernels to the range by hand, so its extent
// held the time they overlapped compute (not its cost), and its spans were set only where the
// host waited on a collective: tracelens_resnet_ckpt_mi300's window read from a kernel's start,
// 0.7 us before any of it was exposed. Its spans are now the exposed time and the waits' idle.
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using namespace ttap;

TEST(CommSpan, NotOverlappedShowsWhereItsCollectivesAreExposed) {
  size_t found = 0;
  for (const std::string fixture : {"tracelens_resnet_ckpt_mi300.json.gz", "hta_sampled_rank1.json.gz"}) {
    const rules_support::Loaded& l = rules_support::load(test::data(fixture));
    for (auto [b, e] : l.windows)
      for (const RuleFinding& f : l.engine->detect(b, e)) {
        if (f.id != "comm_not_overlapped") continue;
        ++found;
        ASSERT_FALSE(f.spans.empty()) << fixture << " " << rules_support::findings_text({f});
        int64_t in_spans = 0;
        for (auto [sb, se] : f.spans) in_spans += se - sb;
        EXPECT_EQ(in_spans, f.cost) << fixture << " " << rules_support::findings_text({f});
        EXPECT_EQ(f.begin, f.spans.front().first) << fixture;
        EXPECT_EQ(f.end, f.spans.back().second) << fixture;
        EXPECT_GE(f.begin, b) << fixture;
        EXPECT_LE(f.end, e) << fixture;
      }
  }
  EXPECT_GT(found, 0u);
}

}  // namespace
