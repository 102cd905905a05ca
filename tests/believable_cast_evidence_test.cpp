// Findings a user can believe (issue 12, item 0): cast_churn's "N dtype casts launched one by
// one around the range" is said only where there are such casts. On gpuzoo_0008 (DeepLabV3
// inference under autocast on an H200), whose casts all run inside aten ops (autocast's
// float-to-bfloat16 casts), cast_churn's windows read "0 dtype casts
// launched one by one in the 1.00 ms around the range".
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using namespace ttap;

TEST(BelievableCastEvidence, NoWindowCountsZeroCastsLaunchedOneByOne) {
  const TraceReport r = rules_support::analyze_all_windows(
      rules_support::load(ttap::test::data("gpu_zoo/gpuzoo_0008_deeplabv3_mobilenet_v3_large_inference.json.gz")));
  size_t casts = 0;
  for (const FlaggedWindow& w : r.flagged)
    for (const Finding& f : w.findings) {
      if (f.id != "cast_churn") continue;
      ++casts;
      for (const std::string& line : f.evidence) {
        EXPECT_NE(line.rfind("0 dtype casts launched one by one", 0), 0u) << "window " << w.index << ": " << line;
      }
    }
  EXPECT_GT(casts, 0u) << "the casts are still reported (info: 0.9% of a step)";
}

}  // namespace
