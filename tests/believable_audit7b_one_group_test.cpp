// One problem, one finding (audit7b): gpuzoo_0001 (ResNet-50 inference in FP32 on an H200)
// listed fp32_no_tensor_cores twice, the FP32 convolutions at 17.6% of step time and its one
// FP32 aten::addmm (the classifier) at 0.0%: flagged window 99 holds only the addmm, whose
// origin differs from the convolutions', though the rules across the steady state name both in
// one finding, fixed by one autocast. The model scorer flags window 99; the rule scorer does not.
// Fixture: tests/data/gpu_zoo/ (scripts/dataset/make_gpu_zoo.py on an H200).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "../src/classify/classify.hpp"
#include "suite_support.hpp"
#include "ttap/analyze.hpp"
#include "ttap/load.hpp"

namespace {

using namespace ttap;

TraceReport analyze_with_model(const std::string& path) {
  ::setenv("TTAP_SPM_MODULE", TTAP_SPM_MODULE_PATH, 1);
  ::setenv("TTAP_TORCH_MODULE", TTAP_TORCH_MODULE_PATH, 1);
  const Trace t = load_trace(path);
  const EventTree tree = EventTree::build(t);
  AnalyzeSettings s;
  s.score.scorer = Scorer::model;
  s.score.model = std::string(TTAP_SOURCE_DIR) + "/models";
  s.score.device = "cpu";
  return analyze_trace(t, tree, s);
}

TEST(OneGroupPerProblem, Fp32AddmmWindowJoinsTheSteadyStatesFp32Finding) {
  const TraceReport r = analyze_with_model(suite::data_path("gpu_zoo/gpuzoo_0001_resnet50_inference.json.gz"));
  bool addmm_window = false;
  for (const FlaggedWindow& w : r.flagged)
    for (const Finding& f : w.findings) addmm_window |= f.id == "fp32_no_tensor_cores" && f.origin == "aten::addmm";
  ASSERT_TRUE(addmm_window) << "a flagged window whose only FP32 math is the addmm";
  size_t groups = 0;
  const GroupedFinding* fp32 = nullptr;
  for (const GroupedFinding& g : r.findings)
    if (g.id == "fp32_no_tensor_cores") ++groups, fp32 = &g;
  ASSERT_EQ(groups, 1u);
  EXPECT_EQ(fp32->origin, "aten::cudnn_convolution");
  EXPECT_GT(fp32->share, 0.15);
  EXPECT_NE(std::find(fp32->windows.begin(), fp32->windows.end(), 99u), fp32->windows.end()) << "the addmm's window";
}

}  // namespace
