// Which finding owns cuDNN's NHWC<->NCHW transposes around FP32 kernels on CUDA cores.
// gpuzoo_0001 (a channels_last ResNet-50 in FP32, TF32 off; labeled fp32_no_tensor_cores only)
// runs each convolution as nhwcToNchw, an NCHW FP32 kernel (..._nchwkcrs_nchw_..._ffma) and
// nchwToNhwc: reduced precision removes the transposes with the FP32 math, since cuDNN's
// tensor-core kernels take channels_last tensors as they are. fp32_no_tensor_cores' cost left
// them out and layout_conversion counted them as a problem of its own, named first in three
// windows. Fixtures: tests/data/gpu_zoo/ (scripts/dataset/make_gpu_zoo.py on an H200).
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::find_finding;
using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

const Loaded& zoo(const std::string& name) { return ttap::rules_support::load(ttap::test::data("gpu_zoo/" + name)); }

bool named(const Loaded& l, ttap::EventId e, const char* part) {
  return l.trace.name_of(e).find(part) != std::string_view::npos;
}

// cuDNN's transposes (and, with `math`, its NCHW FP32 convolution kernels) starting in [b, e).
std::vector<ttap::EventId> kernels_in(const Loaded& l, int64_t b, int64_t e, bool math) {
  std::vector<ttap::EventId> out;
  for (ttap::EventId g = 0; g < l.trace.size(); ++g) {
    if (l.trace.category[g] != ttap::Category::Kernel || l.trace.ts[g] < b || l.trace.ts[g] >= e) continue;
    const bool transpose = named(l, g, "nhwcToNchw") || named(l, g, "nchwToNhwc");
    if (math ? named(l, g, "f32f32_f32f32_f32_nchwkcrs_nchw") : transpose) out.push_back(g);
  }
  return out;
}

bool covered(const ttap::RuleFinding& f, int64_t b, int64_t e) {
  for (auto [sb, se] : f.spans)
    if (sb <= b && e <= se) return true;
  return false;
}

// The three windows of gpuzoo_0001 that named layout_conversion first: the FP32 finding is
// named first, its cost is half its FP32 kernels' time plus every transpose's, its spans hold
// the transposes, and layout_conversion counts them nowhere (not in any window, nor in the
// report's grouped findings and recoverable share).
TEST(Fp32ConversionsRules, CudnnTransposesAroundFp32KernelsAreTheFp32FindingsCost) {
  const Loaded& l = zoo("gpuzoo_0001_resnet50_inference.json.gz");
  const std::regex line(R"(^cuDNN converts channels_last tensors to NCHW and back around these kernels: [0-9]+ conversion kernels?, [0-9.]+ us \(cudnn::engines_precompiled::(nchwToNhwc|nhwcToNchw)Kernel .*\), counted in the cost, as its tensor-core kernels take channels_last tensors as they are$)");
  for (size_t w : {6u, 7u, 61u}) {
    const auto [b, e] = l.windows[w];
    const auto found = l.engine->detect(b, e);
    ASSERT_FALSE(found.empty()) << w;
    EXPECT_EQ(found.front().id, "fp32_no_tensor_cores") << w << "\n" << findings_text(found);
    const ttap::RuleFinding* fp32 = find_finding(found, "fp32_no_tensor_cores");
    ASSERT_NE(fp32, nullptr) << w;
    int64_t math = 0, transposes = 0;
    for (ttap::EventId g : kernels_in(l, b, e, true)) math += l.trace.dur[g];
    const std::vector<ttap::EventId> moved = kernels_in(l, b, e, false);
    ASSERT_GE(moved.size(), 3u) << w;
    for (ttap::EventId g : moved) {
      transposes += l.trace.dur[g];
      EXPECT_TRUE(covered(*fp32, l.trace.ts[g], l.trace.end(g))) << w << ": " << l.trace.name_of(g);
    }
    EXPECT_NEAR(static_cast<double>(fp32->cost), static_cast<double>(math / 2 + transposes), 1.0) << w;
    EXPECT_TRUE(std::any_of(fp32->evidence.begin(), fp32->evidence.end(),
                            [&](const std::string& s) { return std::regex_match(s, line); }))
        << findings_text({*fp32});
  }
  for (auto [b, e] : l.windows) EXPECT_EQ(find_finding(l.engine->detect(b, e), "layout_conversion"), nullptr) << b;
  // Across the steady state, which gives the grouped finding its cost: the same sum.
  const auto across = l.engine->detect(l.begin, l.end);
  EXPECT_EQ(find_finding(across, "layout_conversion"), nullptr) << findings_text(across);
  const ttap::RuleFinding* fp32 = find_finding(across, "fp32_no_tensor_cores");
  ASSERT_NE(fp32, nullptr) << findings_text(across);
  int64_t math = 0, transposes = 0;
  for (ttap::EventId g : kernels_in(l, l.begin, l.end, true)) math += l.trace.dur[g];
  for (ttap::EventId g : kernels_in(l, l.begin, l.end, false)) transposes += l.trace.dur[g];
  EXPECT_GE(fp32->cost, math / 2 + transposes) << findings_text(across);  // and the FP32 aten::addmm's half
  const ttap::TraceReport r = ttap::rules_support::analyze_default_windows(l);
  bool fp32_group = false;
  for (const ttap::GroupedFinding& g : r.findings) {
    EXPECT_NE(g.id, "layout_conversion") << g.origin;
    fp32_group = fp32_group || g.id == "fp32_no_tensor_cores";
  }
  EXPECT_TRUE(fp32_group);
}

// gpuzoo_0012 (a VAE in FP32, channels_last, with GroupNorm): its window 17 holds both causes.
// The transposes around the FP32 convolution go to fp32_no_tensor_cores; group norm's own
// conversions (aten::contiguous copies, and the GPU idle waiting for them) stay
// layout_conversion's and name the norm, where the fix read "run aten::copy_ in reduced
// precision" when the transposes were counted with them.
TEST(Fp32ConversionsRules, GroupNormsConversionsStayLayoutConversions) {
  const Loaded& l = zoo("gpuzoo_0012_vae_train.json.gz");
  const auto [b, e] = l.windows[17];
  const auto found = l.engine->detect(b, e);
  const ttap::RuleFinding* layout = find_finding(found, "layout_conversion");
  const ttap::RuleFinding* fp32 = find_finding(found, "fp32_no_tensor_cores");
  ASSERT_NE(layout, nullptr) << findings_text(found);
  ASSERT_NE(fp32, nullptr) << findings_text(found);
  EXPECT_EQ(layout->fix.rfind("the conversions are group norm's", 0), 0u) << layout->fix;
  for (ttap::EventId g : layout->events)
    EXPECT_FALSE(named(l, g, "nhwcToNchw") || named(l, g, "nchwToNhwc")) << l.trace.name_of(g);
  EXPECT_TRUE(ttap::rules_support::evidence_has(*fp32, "cuDNN converts channels_last tensors to NCHW and back"))
      << findings_text({*fp32});
}

// gpuzoo_0012's window 88 holds 17 us of FP32 convolution math (FFT kernels of a
// convolution_backward), under the rule's 20 us bar, and 5.8 us of cuDNN's transposes around it.
// With the transposes the FP32 finding's, they count toward the bar: the window names
// fp32_no_tensor_cores with them, where it named neither once layout_conversion left them
// (fewer than its 3 conversions remain there).
TEST(Fp32ConversionsRules, TransposesCountTowardTheFp32Bar) {
  const Loaded& l = zoo("gpuzoo_0012_vae_train.json.gz");
  const auto [b, e] = l.windows[88];
  const auto found = l.engine->detect(b, e);
  const ttap::RuleFinding* fp32 = find_finding(found, "fp32_no_tensor_cores");
  ASSERT_NE(fp32, nullptr) << findings_text(found);
  // "P% of kernel time (MATH of ALL) is FP32 GEMM/conv math ...": the math alone is under the bar.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(fp32->evidence.front(), m, std::regex(R"(\(([0-9.]+) us of )"))) << fp32->evidence.front();
  EXPECT_LT(std::stod(m[1]), 20.0) << fp32->evidence.front();
  EXPECT_TRUE(ttap::rules_support::evidence_has(*fp32, "cuDNN converts channels_last tensors to NCHW and back"))
      << findings_text({*fp32});
  EXPECT_GT(fp32->cost, static_cast<int64_t>(std::stod(m[1]) * 1000 / 2)) << "the transposes are in its cost";
}

// What must not move: NCHW tensors made NHWC for cuDNN's NHWC kernels (the op's first transpose
// is nchwToNhwc), which channels_last removes. hta_ddp_cnn_v100_nsres runs FP32 NHWC kernels on
// a V100, h200_twin TF32 ones: its FP32 findings take no transpose (no spans, no conversion
// line), and the twin's layout_conversion keeps them all.
TEST(Fp32ConversionsRules, NchwTensorsMadeNhwcStayLayoutConversions) {
  for (const char* trace : {"hta_ddp_cnn_v100_nsres.json.gz", "h200_twin/resnet50_h200_nw0.json.gz"}) {
    const Loaded& l = ttap::rules_support::load(ttap::test::data(trace));
    size_t fp32_found = 0, layout_transposes = 0;
    for (auto [b, e] : l.windows) {
      const auto found = l.engine->detect(b, e);
      if (const ttap::RuleFinding* fp32 = find_finding(found, "fp32_no_tensor_cores")) {
        ++fp32_found;
        EXPECT_TRUE(fp32->spans.empty()) << trace << " " << b;
        EXPECT_FALSE(ttap::rules_support::evidence_has(*fp32, "cuDNN converts")) << findings_text({*fp32});
      }
      if (const ttap::RuleFinding* layout = find_finding(found, "layout_conversion"))
        for (ttap::EventId g : layout->events) layout_transposes += named(l, g, "ToNhwc") || named(l, g, "ToNchw");
    }
    EXPECT_GT(fp32_found, 0u) << trace;
    if (std::string(trace).starts_with("h200_twin")) {
      EXPECT_GT(layout_transposes, 0u);
    }
  }
}

}  // namespace
