// Findings a user can believe (issue 12, item 0), audit of the twelfth round: launch_bound said
// "most short kernels come from X (N)" of whichever op launched the most, however few:
// h200_twin's nw0 read "most short kernels come from aten::convolution_backward (658)" beside
// "1469 (34%) shorter than their launch call" (45% of them), and a zoo DEV run (gpuzoo_0062)
// "most short kernels come from aten::abs (1)" of 9, every op with one. "Most" now only where
// one op launches more than half of them; otherwise the line counts the ops and says which
// launches the most, or that none does, and the fix then names no op to start with.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using namespace ttap;

TEST(BelievableAudit6ShortKernels, MostOnlyWhereOneOpHoldsMoreThanHalf) {
  for (const char* trace : {"h200_twin/resnet50_h200_nw0.json.gz", "gpu_zoo/gpuzoo_0032_resnet18_inference.json.gz",
                            "tracelens_vit_nsfw_h100.json.gz"}) {
    const TraceReport r = rules_support::analyze_all_windows(rules_support::load(test::data(trace)));
    size_t seen = 0;
    for (const FlaggedWindow& w : r.flagged)
      for (const Finding& f : w.findings) {
        if (f.id != "launch_bound") continue;
        for (const std::string& line : f.evidence) {
          if (line.find("short kernels") == std::string::npos || line.find("shorter than") != std::string::npos) continue;
          std::smatch m;
          ASSERT_TRUE(std::regex_search(line, m, std::regex(R"((\d+) of (\d+))"))) << trace << ": " << line;
          const long n = std::stol(m[1]), of = std::stol(m[2]);
          ++seen;
          if (line.rfind("most short kernels", 0) == 0)
            EXPECT_GT(2 * n, of) << trace << ": " << line;
          else
            EXPECT_LE(2 * n, of) << trace << ": " << line;
        }
      }
    EXPECT_GT(seen, 0u) << trace;
  }
}

TEST(BelievableAudit6ShortKernels, TheSteadyStateGroupOfNw0) {
  const TraceReport r = rules_support::analyze_default_windows(
      rules_support::load(test::data("h200_twin/resnet50_h200_nw0.json.gz")));
  bool found = false;
  for (const GroupedFinding& g : r.findings)
    if (g.id == "launch_bound")
      for (const std::string& line : g.evidence)
        if (std::regex_match(line, std::regex(R"(^short kernels come from \d+ ops, the most from aten::convolution_backward \(\d+ of \d+\)$)")))
          found = true;
  EXPECT_TRUE(found);
}

}  // namespace
