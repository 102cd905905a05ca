// gpu_idle's lines about each gap say what happened in it (issue 12 items 0 and 1: evidence
// lines are what users read, and they must be exact). Fixtures: the GPU zoo's dev recordings in
// tests/data/gpu_zoo/ (scripts/dataset/make_gpu_zoo.py --seed 2026 on an H200).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

// The lines after the first name the gaps that hold most of gpu_idle's idle, first the one
// that holds most (as detect_gpu_idle orders them), each with launch_bound's dispatch beside its
// pieces (tests/gap_as_measured_test.cpp). A line saying the GPU "stays idle to the end of the
// range" must be about a gap that reaches the range's end: one cut short by a more specific
// pattern's idle (a pageable upload's wait, zero_grad's) is not, and said so before.
void expect_gap_ends_told_right(const std::string& trace, size_t* cut_short_lines) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data(trace));
  for (auto [b, e] : l.windows) {
    const std::vector<ttap::RuleFinding> found = l.engine->detect(b, e);
    for (const ttap::RuleFinding& f : found) {
      if (f.id != "gpu_idle") continue;
      const auto idle_in = [&](const std::pair<int64_t, int64_t>& g) {
        int64_t n = 0;
        for (auto [pb, pe] : f.spans) n += std::max<int64_t>(0, std::min(pe, g.second) - std::max(pb, g.first));
        return n;
      };
      std::vector<std::pair<int64_t, int64_t>> joined = f.spans;
      if (const ttap::RuleFinding* lb = ttap::rules_support::find_finding(found, "launch_bound"))
        joined.insert(joined.end(), lb->spans.begin(), lb->spans.end());
      std::sort(joined.begin(), joined.end());
      std::vector<std::pair<int64_t, int64_t>> gaps;
      for (auto iv : joined) {
        if (!gaps.empty() && iv.first <= gaps.back().second) gaps.back().second = std::max(gaps.back().second, iv.second);
        else gaps.push_back(iv);
      }
      std::erase_if(gaps, [&](const auto& g) { return idle_in(g) == 0; });
      std::stable_sort(gaps.begin(), gaps.end(), [&](const auto& x, const auto& y) { return idle_in(x) > idle_in(y); });
      for (size_t i = 1; i < f.evidence.size() && i - 1 < gaps.size(); ++i) {
        if (f.evidence[i].find("the GPU stays idle to the end of the range") != std::string::npos) {
          EXPECT_EQ(gaps[i - 1].second, e) << trace << " [" << b << ", " << e << ")\n" << findings_text({f});
        }
        if (f.evidence[i].find("counted by a more specific finding in this range") != std::string::npos) {
          EXPECT_LT(gaps[i - 1].second, e) << findings_text({f});
          ++*cut_short_lines;
        }
      }
    }
  }
}

TEST(IdleGapEvidenceRules, AGapCutShortByAnotherPatternDoesNotStayIdleToTheRangeEnd) {
  size_t cut_short = 0;
  // R3D-18 training whose zero_grad(set_to_none=False) holds the end of each step, and
  // R3D-18 inference with blocking pageable uploads.
  expect_gap_ends_told_right("gpu_zoo/gpuzoo_0031_r3d_18_train.json.gz", &cut_short);
  expect_gap_ends_told_right("gpu_zoo/gpuzoo_0047_r3d_18_inference.json.gz", &cut_short);
  EXPECT_GE(cut_short, 2u);
}

// In training the autograd thread launches the backward and so launches most: it is the
// "main" thread, idle between backward passes while the loop's own thread runs the optimizer.
// The gap before zero_grad read "main thread shows no profiled work" though the loop's thread
// was still in Optimizer.step.
TEST(IdleGapEvidenceRules, TheLoopThreadsWorkIsNamedWhenTheLaunchingThreadIsIdle) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("gpu_zoo/gpuzoo_0031_r3d_18_train.json.gz"));
  size_t named = 0;
  for (auto [b, e] : l.windows)
    for (const ttap::RuleFinding& f : l.engine->detect(b, e))
      if (f.id == "gpu_idle")
        for (const std::string& line : f.evidence)
          named += line.find("main thread shows no profiled work, the training loop's thread in Optimizer.step#SGD.step for ") !=
                   std::string::npos;
  EXPECT_GE(named, 1u);
}

}  // namespace

namespace {

// With with_stack=True the main thread's top-level event is the script's `<module>` frame,
// which holds the whole run; the idle between the clip upload and the target upload read "main
// thread in zoo.py(345): <module>". The frame that held it is the step's fetch, inside it.
TEST(IdleGapEvidenceRules, TheInnermostUserFrameHoldingTheGapIsNamedNotTheScript) {
  const Loaded& l =
      ttap::rules_support::load(ttap::test::data("gpu_zoo/gpuzoo_0014_depth_resnet18_unet_inference.json.gz"));
  size_t fetch = 0;
  for (auto [b, e] : l.windows)
    for (const ttap::RuleFinding& f : l.engine->detect(b, e))
      if (f.id == "gpu_idle")
        for (const std::string& line : f.evidence) {
          EXPECT_EQ(line.find("<module>"), std::string::npos) << line;
          fetch += line.find("main thread in zoo.py(150): fetch for ") != std::string::npos;
        }
  EXPECT_GE(fetch, 1u);
}

}  // namespace
