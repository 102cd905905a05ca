// A round trip's own function (issue 12 item 1): with with_stack, the user function that moves
// tensors out and back shows in the trace, and while the host is in it before it issues the
// copies (choosing what to move) the GPU idles for the round trip's sake, when the function
// launches nothing else. Fixture: tests/data/gpu_zoo/gpuzoo_0058 (scripts/dataset/make_gpu_zoo.py
// --seed 2026 on an H200; label ranges from the dev manifest, in microseconds).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::Loaded;

// Mask R-CNN training whose step moves its four largest weights to the host and back
// (`p.data = p.data.to("cpu").to(device)` after `sorted(model.parameters(), key=numel)`).
// The first window of each round trip held 3.8 ms of the sort with the GPU idle: gpu_idle
// ("main thread in zoo.py(208): offload_roundtrip") was named there, ahead of the round trip.
TEST(OffloadFunctionRules, TheIdleInTheRoundTripsOwnFunctionIsOffload) {
  const Loaded& l =
      ttap::rules_support::load(ttap::test::data("gpu_zoo/gpuzoo_0058_maskrcnn_resnet50_fpn_train.json.gz"));
  const std::vector<std::pair<double, double>> trips_us = {{4690949612534.095, 4690949682467.353},
                                                           {4690949929390.744, 4690949996365.354}};
  const ttap::TraceReport r = ttap::rules_support::analyze_all_windows(l);
  size_t windows = 0, offload_first = 0, in_function = 0;
  for (const ttap::FlaggedWindow& w : r.flagged) {
    if (w.steady_state) continue;
    bool labeled = false;
    for (auto [lb, le] : trips_us) {
      const int64_t rb = static_cast<int64_t>(lb * 1000), re = static_cast<int64_t>(le * 1000);
      labeled = labeled || 5 * (std::min(w.end, re) - std::max(w.begin, rb)) >= w.end - w.begin;
    }
    if (!labeled) continue;
    ++windows;
    ASSERT_FALSE(w.findings.empty()) << "window " << w.index;
    offload_first += w.findings.front().id == "offload_pingpong";
    for (const ttap::Finding& f : w.findings) {
      EXPECT_LE(f.cost, w.end - w.begin);
      if (f.id != "offload_pingpong") continue;
      for (const std::string& e : f.evidence)
        in_function += e.find("with the host in zoo.py(208): offload_roundtrip before it issues the copies") != std::string::npos;
    }
  }
  EXPECT_GE(windows, 20u);
  EXPECT_GE(in_function, 2u);  // the first window of each trip
  EXPECT_EQ(offload_first, windows) << offload_first << " of " << windows;
}

}  // namespace
