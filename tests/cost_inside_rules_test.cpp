// A window's findings are ranked by what they cost inside the window (issue 12, item 1: the
// finding named first explains most of the window's lost or wasted GPU time; costs inside
// their window). Before, the severity that orders them came from a finding's whole cost,
// also the part beyond the window's edges: in ttap-bench-x's x_param_resnet_2080ti_04 (val
// split), a 15.2 ms window inside a chain of 14 unfused elementwise kernels (13.7 ms of them
// in the window) named first a 20.7 ms one-block kernel's low_occupancy, of which 11.6 ms
// lies in the window, because its whole 20.4 ms reached the trace's 1%-of-the-span bar
// for a warning and the chain's 13.7 ms did not.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

const Loaded* corpus_x_trace(const std::string& name) {
  const std::string path = std::string(TTAP_SOURCE_DIR) + "/data/ttap-bench-x/traces/" + name;
  return fs::exists(path) ? &ttap::rules_support::load(path) : nullptr;
}

int64_t inside(const ttap::RuleFinding& f, int64_t b, int64_t e) {
  int64_t fb = f.begin, fe = f.end;
  for (auto [sb, se] : f.spans) fb = std::min(fb, sb), fe = std::max(fe, se);
  return ttap::cost_inside(f.cost, fb, fe, b, e);
}

TEST(CostInsideRules, AKernelRunningPastTheWindowDoesNotOutrankWhatTheWindowHolds) {
  const Loaded* l = corpus_x_trace("x_param_resnet_2080ti_04.json.gz");
  if (l == nullptr) GTEST_SKIP() << "data/ttap-bench-x is missing";
  auto [b, e] = l->windows[18];
  const auto found = l->engine->detect(b, e);
  ASSERT_GE(found.size(), 2u) << findings_text(found);
  EXPECT_EQ(found.front().id, "unfused_elementwise") << findings_text(found);
  // And in every window of the trace, findings of one severity come by their cost inside it.
  for (auto [wb, we] : l->windows) {
    const auto all = l->engine->detect(wb, we);
    for (size_t i = 1; i < all.size(); ++i)
      if (all[i].severity == all[i - 1].severity)
        EXPECT_GE(inside(all[i - 1], wb, we), inside(all[i], wb, we)) << wb << "\n" << findings_text(all);
  }
}

}  // namespace
