// GPU work that no CPU launch in the trace links to (queued before recording began) counts
// in ttap's GPU timeline. TraceLens leaves it out by default and agrees with ttap exactly
// with include_unlinked_kernels=True. hta_torchrec_a100_rank0 has 872 such events; the
// figures below come from tests/tools/compute_expected.py (section "unlinked"), which
// merges the GPU events' intervals in Python: busy 438.424 ms with every GPU event (ttap,
// and TraceLens with include_unlinked_kernels=True), 380.856 ms with the linked ones only
// (TraceLens's default), over a 1231.461 ms scope (no GPU-side step annotations: the span
// of GPU activity). The same section applies TraceLens's gpu_timeline rules (communication:
// "nccl" in the name; total: first start to last end of the events kept) to every GPU
// event, which is TraceLens with include_unlinked_kernels=True: all seven figures equal
// ttap's. By default (linked only) TraceLens reports computation 180.107, exposed
// communication 160.718, exposed memcpy 40.031, busy 380.856 and total 1229.072 ms.
#include <gtest/gtest.h>

#include <vector>

#include "suite_support.hpp"
#include "ttap/analyze.hpp"
#include "ttap/load.hpp"
#include "ttap/tree.hpp"

namespace {

TEST(GoldenUnlinked, TorchrecTimelineCountsGpuWorkWithoutALaunch) {
  const ttap::Trace t = ttap::load_trace(ttap::suite::data_path("hta_torchrec_a100_rank0.json.gz"));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  EXPECT_EQ(tree.gpu_events().size(), 7747u);
  EXPECT_EQ(tree.diagnostics().gpu_without_launch, 872u);
  const auto tl = ttap::gpu_timeline(t, tree);
  ASSERT_EQ(tl.size(), 1u);
  EXPECT_FALSE(tl[0].from_steps);
  EXPECT_EQ(tl[0].total, 1231461000);
  EXPECT_EQ(tl[0].busy, 438424000);
  EXPECT_EQ(tl[0].busy + tl[0].idle, tl[0].total);
  EXPECT_EQ(tl[0].computation, 211484000);
  EXPECT_EQ(tl[0].communication, 187870000);
  EXPECT_EQ(tl[0].exposed_communication, 185300000);
  EXPECT_EQ(tl[0].memcpy, 47219000);
  EXPECT_EQ(tl[0].exposed_memcpy, 41640000);
  // Without the unlinked events, TraceLens's default figure.
  std::vector<ttap::Interval> linked;
  for (ttap::EventId g : tree.gpu_events())
    if (tree.launcher(g) != ttap::kNoEvent) linked.push_back({t.ts[g], t.end(g)});
  EXPECT_EQ(ttap::total_length(ttap::merge_intervals(std::move(linked))), 380856000);
}

}  // namespace
