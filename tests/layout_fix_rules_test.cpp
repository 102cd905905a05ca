// layout_conversion's fix where the code itself makes channels_last tensors NCHW again (audit7:
// the GPU zoo's reports read as the job's author). The zoo's layout_conversion runs keep the
// model channels_last and add a forward hook to every Conv2d that returns `out.contiguous()`:
// each output is made NCHW, and the next convolution converts it back. The fix read "convert
// once: model.to(memory_format=torch.channels_last) and each input batch ...", which the code
// already does. The trace records each aten::contiguous's input strides and the memory format it
// asks for. Fixtures: tests/data/gpu_zoo/ (scripts/dataset/make_gpu_zoo.py on an H200).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::find_finding;
using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

const Loaded& zoo(const std::string& name) { return ttap::rules_support::load(ttap::test::data("gpu_zoo/" + name)); }

ttap::RuleFinding layout_in(const Loaded& l, int64_t b, int64_t e) {
  const auto found = l.engine->detect(b, e);
  const ttap::RuleFinding* f = find_finding(found, "layout_conversion");
  EXPECT_NE(f, nullptr) << findings_text(found);
  return f ? *f : ttap::RuleFinding{};
}

constexpr const char* kDropTheCalls = "the code makes channels_last tensors NCHW again with .contiguous()";

// gpuzoo_0036, EfficientNet-B0 inference with the hook: 616 us of GPU idle ended by the hook's
// conversion (under aten::contiguous, on a channels-last input, asking for the NCHW format).
TEST(LayoutFixRules, ContiguousOnChannelsLastOutputsIsTheCodesToDrop) {
  const ttap::RuleFinding f = layout_in(zoo("gpuzoo_0036_efficientnet_b0_inference.json.gz"), 4690912600217865, 4690912600833492);
  EXPECT_EQ(f.fix.rfind(kDropTheCalls, 0), 0u) << f.fix;
  EXPECT_NE(f.fix.find(".contiguous(memory_format=torch.channels_last)"), std::string::npos) << f.fix;
  EXPECT_EQ(f.fix.find("model.to(memory_format"), std::string::npos) << f.fix;
}

// The layout_conversion findings of every one of the trace's 100 windows.
std::vector<ttap::RuleFinding> layout_everywhere(const Loaded& l) {
  std::vector<ttap::RuleFinding> all;
  for (auto [b, e] : l.windows) {
    const std::vector<ttap::RuleFinding> found = l.engine->detect(b, e);
    if (const ttap::RuleFinding* f = find_finding(found, "layout_conversion")) all.push_back(*f);
  }
  return all;
}

constexpr const char* kConvertOnce = "convert once: model.to(memory_format=torch.channels_last)";

// NCHW tensors made NHWC for cuDNN's kernels, which channels_last removes (channels_last tensors
// made NCHW for FP32 kernels are fp32_no_tensor_cores', fp32_conversions_rules_test.cpp): an NCHW
// ResNet-50 on TF32 tensor cores (h200_twin, sm90 ..._nhwckrsc_nhwc kernels; hta_ddp_a100_nccl).
TEST(LayoutFixRules, NchwTensorsMadeNhwcKeepTheChannelsLastFix) {
  for (const char* trace : {"h200_twin/resnet50_h200_nw0.json.gz", "hta_ddp_a100_nccl.json.gz"}) {
    const std::vector<ttap::RuleFinding> all = layout_everywhere(ttap::rules_support::load(ttap::test::data(trace)));
    EXPECT_FALSE(all.empty()) << trace;
    for (const ttap::RuleFinding& w : all) EXPECT_EQ(w.fix.rfind(kConvertOnce, 0), 0u) << trace << ": " << w.fix;
  }
}

// gpuzoo_0059, a channels_last diffusion UNet (no hook): aten::group_norm makes its channels_last
// input NCHW itself (NativeGroupNormBackward0 its gradient), and the next convolution converts the
// NCHW output back. No call of the code's to drop, and converting the model is what causes it.
TEST(LayoutFixRules, GroupNormsOwnConversionsNameTheNorm) {
  const ttap::RuleFinding f = layout_in(zoo("gpuzoo_0059_diffusion_unet_train.json.gz"), 4690949855968730, 4690949858318678);
  EXPECT_EQ(f.fix.rfind("the conversions are group norm's", 0), 0u) << f.fix;
  EXPECT_NE(f.fix.find("keep the model (or its blocks with GroupNorm) NCHW"), std::string::npos) << f.fix;
  EXPECT_EQ(f.fix.find(kDropTheCalls), std::string::npos) << f.fix;
  EXPECT_EQ(f.fix.find(kConvertOnce), std::string::npos) << f.fix;
}

// r3d_18 (gpuzoo_0047, Conv3d in bf16 on NCDHW inputs): cuDNN transposes them for its NDHWC
// kernels. The fix said model.to(memory_format=torch.channels_last), which PyTorch refuses for
// 5-D weights ("required rank 4 tensor to use channels_last format"); channels_last_3d is theirs.
TEST(LayoutFixRules, ThreeDConvolutionsGetTheFiveDFormat) {
  const std::vector<ttap::RuleFinding> all = layout_everywhere(zoo("gpuzoo_0047_r3d_18_inference.json.gz"));
  EXPECT_FALSE(all.empty());
  for (const ttap::RuleFinding& w : all) {
    EXPECT_NE(w.fix.find("model.to(memory_format=torch.channels_last_3d)"), std::string::npos) << w.fix;
    EXPECT_EQ(w.fix.find("torch.channels_last)"), std::string::npos) << w.fix;
  }
}

}  // namespace
