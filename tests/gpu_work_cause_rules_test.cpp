// What the GPU works on, and what a whole pattern costs (issue 12, items 0 and 1, the rules'
// sixth round), on the GPU workload zoo's recordings made for ttap on an H200
// (tests/data/gpu_zoo, SOURCES.md; the labeled ranges are the dev manifest's, the traces
// carry none):
// - With TF32 off, cuDNN and cuBLAS pick xmma kernels built for the CUDA cores
//   ("..._f32f32_f32f32_f32_..._ffma_..."). The name holds "xmma", which had counted as
//   tensor-core math, so FP32 convolutions filling a window went unreported.
// - zero_grad(set_to_none=False) with a foreach optimizer fills every gradient in one or two
//   aten::_foreach_zero_ launches; the rule wanted eight kernels (one per gradient) and said
//   nothing.
// - A pattern's severity is that of its cost over the whole trace: it must not depend on
//   how many windows are flagged (--top-k).
// - An idle gap the host did not cause: the kernel that ends it had been launched long
//   before, the device idle all the while. gpu_idle says so instead of only pointing at the
//   host.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::find_finding;
using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

const Loaded& zoo(const std::string& name) { return ttap::rules_support::load(ttap::test::data("gpu_zoo/" + name)); }

bool any_matches(const std::vector<std::string>& lines, const std::regex& re) {
  for (const std::string& l : lines)
    if (std::regex_match(l, re)) return true;
  return false;
}

// resnet50 inference with TF32 and autocast off (the zoo's fp32_no_tensor_cores): in this
// 0.35 ms window of the first step's label the GPU is busy 87% of its kernel time in two FP32
// implicit-GEMM convolutions on the CUDA cores. Before, the window named layout_conversion
// (cuDNN's 28 us of transposes) and no FP32 finding at all.
TEST(GpuWorkCauseRules, Fp32ConvolutionsOnCudaCoresAreNamedFirst) {
  const Loaded& l = zoo("gpuzoo_0001_resnet50_inference.json.gz");
  const int64_t b = 4690836645441571, e = 4690836645787261;
  const auto found = l.engine->detect(b, e);
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found.front().id, "fp32_no_tensor_cores") << findings_text(found);
  const ttap::RuleFinding* fp32 = find_finding(found, "fp32_no_tensor_cores");
  ASSERT_NE(fp32, nullptr) << findings_text(found);
  EXPECT_LE(fp32->cost, e - b);
  EXPECT_GE(static_cast<double>(fp32->cost), 0.3 * static_cast<double>(e - b)) << findings_text(found);
  EXPECT_TRUE(any_matches(fp32->evidence, std::regex(R"(^[0-9.]+% of kernel time \([0-9.]+ (us|ms) of [0-9.]+ (us|ms)\) is FP32 GEMM/conv math without tensor cores on NVIDIA H200 \(sm_90\); GEMM/conv take [0-9.]+ (us|ms) in all$)")))
      << findings_text(found);
  EXPECT_TRUE(any_matches(fp32->evidence, std::regex(R"(^kernels: sm80_xmma_fprop_implicit_gemm_.*f32f32_f32f32_f32.*)")))
      << findings_text(found);
  EXPECT_NE(fp32->fix.find("torch.backends.cuda.matmul.allow_tf32 = True"), std::string::npos) << fp32->fix;
}

// The same recording's labeled range, window by window: wherever the FP32 finding is made, the
// cuDNN transposes around its kernels (nhwcToNchw) are not counted as math (its cost takes
// them apart, fp32_conversions_rules_test.cpp), and the cost stays inside the window.
TEST(GpuWorkCauseRules, Fp32CostStaysInsideEachWindow) {
  const Loaded& l = zoo("gpuzoo_0001_resnet50_inference.json.gz");
  size_t found_in = 0;
  for (auto [b, e] : l.windows) {
    if (b < 4690836628367603 || e > 4690836662004227) continue;
    const auto found = l.engine->detect(b, e);
    const ttap::RuleFinding* fp32 = find_finding(found, "fp32_no_tensor_cores");
    if (fp32 == nullptr) continue;
    ++found_in;
    EXPECT_LE(fp32->cost, e - b) << b << "\n" << findings_text(found);
    for (size_t i = 0; i < 2 && i < fp32->evidence.size(); ++i)  // the math and its kernels
      EXPECT_EQ(fp32->evidence[i].find("ToNchw"), std::string::npos) << fp32->evidence[i];
  }
  EXPECT_GE(found_in, 20u);
}

// r3d_18 training with SGD (foreach) and zero_grad(set_to_none=False): each step's
// Optimizer.zero_grad span runs ~150 us of Python, then two aten::_foreach_zero_ kernels,
// while the GPU idles. Before, no finding named it (two kernels, under the eight-kernel bar).
TEST(GpuWorkCauseRules, ForeachZeroGradIsGradNotSetToNone) {
  const Loaded& l = zoo("gpuzoo_0031_r3d_18_train.json.gz");
  const int64_t b = 4690900075726675, e = 4690900076284501;  // holds the second step's label
  const auto found = l.engine->detect(b, e);
  const ttap::RuleFinding* zero = find_finding(found, "grad_not_set_to_none");
  ASSERT_NE(zero, nullptr) << findings_text(found);
  EXPECT_LE(zero->cost, e - b);
  EXPECT_GE(zero->cost, 100'000) << findings_text(found);
  EXPECT_TRUE(any_matches(zero->evidence, std::regex(R"(^Optimizer\.zero_grad#SGD\.zero_grad \([0-9.]+ us here\) ran 2 kernels/memsets \([0-9.]+ us\) to zero gradients: aten::_foreach_zero_ x2$)")))
      << findings_text(found);
  EXPECT_TRUE(any_matches(zero->evidence, std::regex(R"(^GPU idle [0-9.]+ us \([0-9.]+% of the range\) while the host is in Optimizer\.zero_grad#SGD\.zero_grad, launching nothing but the zeroing$)")))
      << findings_text(found);
  EXPECT_NE(zero->fix.find("zero_grad(set_to_none=True)"), std::string::npos) << zero->fix;
  EXPECT_NE(zero->fix.find("aten::_foreach_zero_"), std::string::npos) << zero->fix;
  // The idle inside the zero_grad span is its own: gpu_idle keeps only what lies before it.
  if (const ttap::RuleFinding* idle = find_finding(found, "gpu_idle")) {
    EXPECT_LE(idle->cost + zero->cost, e - b) << findings_text(found);
  }
}

// The clean r3d_18 run of the same zoo (set_to_none=True, foreach SGD) launches nothing from
// zero_grad: the rule stays silent on every window.
TEST(GpuWorkCauseRules, ZeroGradThatDropsGradientsIsNotFlagged) {
  const Loaded& l = zoo("gpuzoo_0015_r3d_18_train.json.gz");
  for (auto [b, e] : l.windows) EXPECT_EQ(find_finding(l.engine->detect(b, e), "grad_not_set_to_none"), nullptr) << b;
}

// vae training: launch_bound is spread over more windows than the top five. Its severity,
// which comes from its cost over the whole trace, was info when five windows were flagged and
// a warning when all were; now every window's cost counts either way.
TEST(GpuWorkCauseRules, SeverityDoesNotDependOnHowManyWindowsAreFlagged) {
  for (const char* name : {"gpuzoo_0012_vae_train.json.gz", "gpuzoo_0001_resnet50_inference.json.gz",
                           "gpuzoo_0031_r3d_18_train.json.gz"}) {
    const Loaded& l = zoo(name);
    std::map<std::string, ttap::Severity> by_k[2];
    for (int i = 0; i < 2; ++i) {
      ttap::AnalyzeSettings s;
      s.score.scorer = ttap::Scorer::rules;
      s.top_k = i == 0 ? 5 : 100;
      if (i == 1) s.flag_spacing = 0;  // every window
      for (const ttap::FlaggedWindow& w : ttap::analyze_trace(l.trace, l.tree, s).flagged)
        for (const ttap::Finding& f : w.findings)
          if (!w.steady_state) by_k[i][f.id] = f.severity;
    }
    ASSERT_FALSE(by_k[0].empty()) << name;
    for (const auto& [id, sev] : by_k[0]) {
      ASSERT_TRUE(by_k[1].count(id)) << name << " " << id;
      EXPECT_EQ(sev, by_k[1][id]) << name << " " << id;
    }
  }
}

// deeplabv3_mobilenet_v3_large inference: in this window the GPU idles 171 us, and the
// aten::add kernel that ends the gap had been launched 274 us before it started, with nothing
// in the trace running on the device since. Before, the line named only the host's
// aten::conv2d, as if the host had kept the GPU waiting.
TEST(GpuWorkCauseRules, IdleWithAKernelAlreadyQueuedSaysTheHostDidNotCauseIt) {
  const Loaded& l = zoo("gpuzoo_0008_deeplabv3_mobilenet_v3_large_inference.json.gz");
  const int64_t b = 4690848399707153, e = 4690848400017600;
  const auto found = l.engine->detect(b, e);
  const ttap::RuleFinding* idle = find_finding(found, "gpu_idle");
  ASSERT_NE(idle, nullptr) << findings_text(found);
  EXPECT_TRUE(any_matches(idle->evidence, std::regex(R"(^171 us gap at \+0\.0 us from the range start: main thread in aten::conv2d for 105 us of it; the GPU resumes with aten::add, whose kernel had been launched 274 us before it started with nothing in this trace running on the device meanwhile: the host had already queued it$)")))
      << findings_text(found);
  EXPECT_NE(idle->fix.find("other processes sharing the GPU"), std::string::npos) << idle->fix;
}

// mobilenet_v3_small inference, whose kernels start within 11 us of their launch (95th
// percentile): its idle gaps are the host's, and no line says otherwise.
TEST(GpuWorkCauseRules, IdleTheHostCausedIsNotBlamedOnTheDevice) {
  const Loaded& l = zoo("gpuzoo_0050_mobilenet_v3_small_inference.json.gz");
  size_t idle_findings = 0;
  for (auto [b, e] : l.windows)
    for (const ttap::RuleFinding& f : l.engine->detect(b, e)) {
      if (f.id != "gpu_idle") continue;
      ++idle_findings;
      for (const std::string& ev : f.evidence) EXPECT_EQ(ev.find("the host had already queued it"), std::string::npos) << ev;
      EXPECT_EQ(f.fix.find("other processes sharing the GPU"), std::string::npos) << f.fix;
    }
  EXPECT_GT(idle_findings, 0u);
}

}  // namespace
