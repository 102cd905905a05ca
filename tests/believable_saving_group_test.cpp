// Findings a user can believe (issue 12, item 0): an id's what-if saving is the whole id's
// (every instance fixed), so it is shown on one group of that id, the costliest. On
// hta_sampled_rank0 the exposed all-gather group "costs ~4.45 ms per step ... what-if: fixing
// it saves ~168 ms per step (27.4%)" and ranked second by that saving, though the 168 ms is
// the exposed all-reduce's (the other comm_not_overlapped group, 168 ms a step itself).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using namespace ttap;

TEST(BelievableSavingGroup, AnIdsWhatIfIsShownOnItsCostliestGroupOnly) {
  for (const char* name : {"hta_sampled_rank0.json.gz", "hta_torchrec_a100_rank0.json.gz", "kineto_resnet50_v100_nw0.json.gz"}) {
    SCOPED_TRACE(name);
    const TraceReport r = rules_support::analyze_all_windows(rules_support::load(ttap::test::data(name)));
    std::map<std::string, const GroupedFinding*> with_saving, costliest;
    for (const GroupedFinding& g : r.findings) {
      if (g.one_time) continue;
      if (g.saving) {
        EXPECT_EQ(with_saving.count(g.id), 0u) << g.id << ": a second group carries the id's saving (" << g.origin << ")";
        with_saving[g.id] = &g;
      }
      if (!costliest.count(g.id) || g.cost > costliest[g.id]->cost) costliest[g.id] = &g;
    }
    for (const auto& [id, g] : with_saving) {
      EXPECT_EQ(g, costliest[id]) << id << ": the saving sits on " << g->origin << ", not the costliest group";
    }
  }
}

TEST(BelievableSavingGroup, TheExposedAllGatherRanksByItsOwnCost) {
  const TraceReport r = rules_support::analyze_all_windows(rules_support::load(ttap::test::data("hta_sampled_rank0.json.gz")));
  const GroupedFinding* gather = nullptr;
  const GroupedFinding* reduce = nullptr;
  for (const GroupedFinding& g : r.findings) {
    if (g.id != "comm_not_overlapped") continue;
    if (g.origin == "c10d::_allgather_base_") gather = &g;
    else if (!reduce || g.cost > reduce->cost) reduce = &g;
  }
  ASSERT_NE(gather, nullptr);
  ASSERT_NE(reduce, nullptr);
  EXPECT_FALSE(gather->saving) << "the all-gather costs " << gather->share << " of a step";
  EXPECT_DOUBLE_EQ(gather->rank_share, gather->share);
  // Its two all-gathers run 63.6 and 42.5 ms with no compute, of steps of 607.3 and 622.9 ms
  // (checked in the trace): 8.6%. Before the eleventh round's audit the rules counted only
  // collectives that start in a window and put 0.7% on it (the windows inside them read
  // "collective kernels busy" with no kernel named).
  EXPECT_NEAR(gather->share, 0.086, 0.005);
  ASSERT_TRUE(reduce->saving);
  EXPECT_GT(reduce->saving->step_share, 0.2);
}

}  // namespace
