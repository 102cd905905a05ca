// A single-process DataLoader (num_workers=0) makes every batch on the training thread, so
// each fetch holds the step whatever its length (issue 12 item 1: a window is judged by what
// caused what it shows). dataloader_stall let a fetch pass when it cost under 5% of a median
// step, for workers that keep up; a single-process loader has none to keep up, and windows
// inside its 11.1 ms and 10.5 ms fetches had no finding at all. Trace: ttap-bench's CPU
// workload zoo, Faster R-CNN (MobileNetV3-Large FPN) training with num_workers=0 (steps of
// 192 and 232 ms; tests/data/cpu_zoo/, label ranges from ttap-bench's manifest, in
// microseconds).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"
#include "ttap/windows.hpp"

namespace {

using ttap::rules_support::evidence_has;
using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

const std::vector<std::pair<double, double>> kFetches = {{609.0, 11755.0}, {193216.0, 203840.0}};

TEST(SingleLoaderRules, EveryFetchOfASingleProcessLoaderIsAStall) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("cpu_zoo/zoo_0245_fasterrcnn_mobilenet_v3_large_fpn_train.json.gz"));
  size_t inside = 0, named = 0;
  std::string misses;
  for (const ttap::Window& w : ttap::make_windows(l.trace, l.tree)) {
    bool in_fetch = false;  // the fetch covers at least half of the window
    for (auto [b_us, e_us] : kFetches) {
      const int64_t b = static_cast<int64_t>(b_us * 1000), e = static_cast<int64_t>(e_us * 1000);
      in_fetch = in_fetch || 2 * (std::min(w.end, e) - std::max(w.begin, b)) >= w.end - w.begin;
    }
    if (!in_fetch) continue;
    ++inside;
    const std::vector<ttap::RuleFinding> found = l.engine->detect(w.begin, w.end);
    if (found.empty() || found.front().id != "dataloader_stall") {
      misses += "window [" + std::to_string(w.begin) + ", " + std::to_string(w.end) + "):\n" + findings_text(found);
      continue;
    }
    ++named;
    const ttap::RuleFinding& f = found.front();
    EXPECT_LE(f.cost, w.end - w.begin) << findings_text(found);
    EXPECT_TRUE(evidence_has(f, "_SingleProcessDataLoaderIter: the batch is made on the training thread (num_workers=0)"))
        << findings_text(found);
  }
  EXPECT_GE(inside, 4u);
  EXPECT_EQ(named, inside) << misses;
}

}  // namespace
