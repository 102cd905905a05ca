// Flagged windows lie apart (scoring.hpp: flag_windows, kFlagSpacing). A stall that spans a
// few windows lifts its neighbours' scores too: with the plain top 5, the controlled pair's
// nw0 run flagged windows 0, 1 and 2 of one DataLoader stall and 69 and 70 of another, and
// every other stall of the run went unflagged.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"
#include "ttap/scoring.hpp"

namespace {

using ttap::flag_windows;

TEST(FlagWindows, TakesTheBestWindowThatLiesApartFromEveryOneTaken) {
  const std::vector<double> s{0.9, 0.95, 0.8, 0.1, 0.7, 0.85};
  EXPECT_EQ(flag_windows(s, 3, 0, false), (std::vector<size_t>{1, 0, 5}));  // the plain top 3
  EXPECT_EQ(flag_windows(s, 3, 1, false), (std::vector<size_t>{1, 0, 5}));  // 1 apart: any two distinct windows
  // 0.9 and 0.8 are next to the best; 0.7 is next to 0.85; 0.1 is two away from both.
  EXPECT_EQ(flag_windows(s, 3, 2, false), (std::vector<size_t>{1, 5, 3}));
  EXPECT_EQ(flag_windows(s, 10, 4, false), (std::vector<size_t>{1, 5}));  // fewer than k fit
  EXPECT_EQ(flag_windows({0.5, 0.5, 0.5}, 2, 0, false), (std::vector<size_t>{0, 1}));  // ties: the earlier window
  EXPECT_EQ(flag_windows({0.0, 0.3, 0.0}, 3, 0, true), (std::vector<size_t>{1}));  // positive_only
  EXPECT_EQ(flag_windows({0.0, 0.3, 0.0}, 3, 0, false), (std::vector<size_t>{1, 0, 2}));
  EXPECT_TRUE(flag_windows({}, 5, 5, false).empty());
}

// analyze as a user runs it on the controlled pair's bad run: five flags on five different
// DataLoader stalls, where the plain top 5 put three on one stall.
TEST(FlagWindows, ControlledPairNw0FlagsFiveDifferentStalls) {
  const auto& l = ttap::rules_support::load(ttap::test::data("kineto_resnet50_v100_nw0.json.gz"));
  const auto flagged_indices = [&](int spacing) {
    ttap::AnalyzeSettings s;
    s.flag_spacing = spacing;
    std::vector<size_t> out;
    for (const ttap::FlaggedWindow& w : ttap::analyze_trace(l.trace, l.tree, s).flagged) {
      if (w.steady_state) continue;
      EXPECT_FALSE(w.findings.empty()) << "window " << w.index;
      if (!w.findings.empty()) {
        EXPECT_EQ(w.findings.front().id, "dataloader_stall") << "window " << w.index;
      }
      out.push_back(w.index);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const std::vector<size_t> spaced = flagged_indices(ttap::kFlagSpacing);
  ASSERT_EQ(spaced.size(), 5u);
  for (size_t i = 1; i < spaced.size(); ++i) EXPECT_GE(spaced[i] - spaced[i - 1], static_cast<size_t>(ttap::kFlagSpacing));
  const std::vector<size_t> plain = flagged_indices(0);
  ASSERT_EQ(plain.size(), 5u);
  size_t adjacent = 0;
  for (size_t i = 1; i < plain.size(); ++i) adjacent += plain[i] - plain[i - 1] == 1;
  EXPECT_GE(adjacent, 2u) << "the plain top 5 should sit on neighbouring windows of the same stalls";
}

}  // namespace
