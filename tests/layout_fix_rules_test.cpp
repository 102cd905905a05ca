// layout_conversion's fix where the code itself makes channels_last tensors NCHW again (audit7:
// the GPU zoo's reports read as the job's author). The zoo's layout_conversion runs keep the
// model channels_last and add a forward hook to every Conv2d that returns `out.contiguous()`:
// each output is made NCHW, and the next convolution converts it back. The fix read "convert
// once: model.to(memory_format=torch.channels_last) and each input batch ...", which the code
// already does. The trace records each aten::contiguous's input strides and the memory format it
// asks for. Fixtures: tests/data/gpu_zoo/ (scripts/dataset/make_gpu_zoo.py on an H200).
#include <gtest/gtest.h>

#include <string>

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

// Conversions the code does not ask for keep the other fix: aten::group_norm making its
// channels-last input contiguous itself (gpuzoo_0059, no hook), and cuDNN's own transposes
// around FP32 kernels (gpuzoo_0001).
TEST(LayoutFixRules, ConversionsInsideOpsAreNotTheCodes) {
  const ttap::RuleFinding norm = layout_in(zoo("gpuzoo_0059_diffusion_unet_train.json.gz"), 4690949855968730, 4690949858318678);
  EXPECT_EQ(norm.fix.find(kDropTheCalls), std::string::npos) << norm.fix;
  const ttap::RuleFinding cudnn = layout_in(zoo("gpuzoo_0001_resnet50_inference.json.gz"), 4690836645441571, 4690836645787261);
  EXPECT_EQ(cudnn.fix.find(kDropTheCalls), std::string::npos) << cudnn.fix;
}

}  // namespace
