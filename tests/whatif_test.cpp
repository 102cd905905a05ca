// What-if estimates against the controlled pair: the same ResNet50 job with DataLoader
// num_workers=0 (nw0) and 4 (nw4). Measured from the JSON with Python: median step
// 176.273 ms (nw0) vs 126.548 ms (nw4), a 49.725 ms difference; the means (174.829 vs
// 139.692 ms, 35.137 ms apart) carry nw4's 181.6 ms warm-up step and a 163.5 ms hiccup,
// so the median is the figure the estimate is held to.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "ttap/load.hpp"
#include "ttap/whatif.hpp"

namespace {

ttap::WhatIf dataloader(const char* name) {
  const ttap::Trace t = ttap::load_trace(ttap::test::data(name));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  return ttap::whatif_dataloader(t, tree);
}

TEST(WhatIf, DataLoaderFixWithin25PercentOfTheMeasuredDifference) {
  const ttap::WhatIf w = dataloader("kineto_resnet50_v100_nw0.json.gz");
  EXPECT_EQ(w.id, "dataloader_stall");
  const double measured = 49.725e6;
  EXPECT_NEAR(static_cast<double>(w.saved_per_step), measured, 0.25 * measured) << w.saved_per_step / 1e6 << " ms";
  // With 4 workers there is almost nothing left to save.
  EXPECT_LT(dataloader("kineto_resnet50_v100_nw4.json.gz").saved_per_step, 2'000'000);
  // Nothing to remove, nothing saved: the replay cancels its own bias.
  EXPECT_EQ(dataloader("tracelens_qwen05b_h100.json.gz").saved_per_step, 0);
}

TEST(WhatIf, AllListsOnlyWhatSaves) {
  const ttap::Trace t = ttap::load_trace(ttap::test::data("kineto_resnet50_v100_nw0.json.gz"));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  const auto all = ttap::whatif_all(t, tree);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all[0].id, "dataloader_stall");
  for (const auto& w : all) EXPECT_GT(w.saved_per_step, 0) << w.id;
}

// Without steps to replay, a sync's saving is the GPU idle from its start to the next GPU
// work. xDiT's warm-up trace has eight hipDeviceSynchronize calls holding the host 35.4 ms
// in all, and the estimate read 41.7 ms: it counted idle that followed calls which held the
// host for microseconds while the host went on to other work. Without the calls the host
// runs ahead by as long as they held it, no more: now 12.1 ms, the idle after the 35.3 ms
// call, the same as the host_sync finding's cost in `ttap analyze`.
TEST(WhatIf, HostSyncWithoutStepsSavesAtMostTheTimeTheSyncsHeldTheHost) {
  const ttap::Trace t = ttap::load_trace(ttap::test::data("tracelens_xdit_flux1_capture.json.gz"));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  ASSERT_TRUE(tree.steps().empty());
  int64_t held = 0;
  for (ttap::EventId e = 0; e < t.size(); ++e)
    if (t.name_of(e).find("Synchronize") != std::string_view::npos && t.dur[e] > 0) held += t.dur[e];
  EXPECT_NEAR(static_cast<double>(held), 35.37e6, 0.01e6);
  const ttap::WhatIf w = ttap::whatif_host_sync(t, tree);
  EXPECT_GT(w.saved_per_step, 10'000'000) << "the 35.3 ms call is followed by GPU idle";
  EXPECT_LE(w.saved_per_step, held) << w.saved_per_step / 1e6 << " ms";
}

}  // namespace
