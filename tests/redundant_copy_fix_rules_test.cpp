// redundant_copy's fix names the call the user wrote (audit7b): gpuzoo_0011 (a diffusion UNet's
// inference step that clones and makes contiguous its activations) read "avoid the copies made
// by aten::copy_", the op under the .contiguous() / .clone() its step calls (most of its large
// copies are `x.transpose(-1, -2).contiguous()`: scripts/dataset/zoo.py), on the windows
// whose large device copies fire the rule. The copies of a copy already named aten::contiguous
// above its aten::clone. Fixture: tests/data/gpu_zoo/ (scripts/dataset/make_gpu_zoo.py on an H200).
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::find_finding;
using ttap::rules_support::findings_text;

TEST(RedundantCopyFix, NamesTheCloneOrContiguousTheStepCalls) {
  const auto& l = ttap::rules_support::load(ttap::test::data("gpu_zoo/gpuzoo_0011_diffusion_unet_inference.json.gz"));
  // Window 81: 3 contiguous/clone kernels, 11.2 MB, 62% of the GPU time there.
  const auto found = l.engine->detect(4690852300400522, 4690852300797191);
  const ttap::RuleFinding* f = find_finding(found, "redundant_copy");
  ASSERT_NE(f, nullptr) << findings_text(found);
  EXPECT_EQ(f->fix.find("aten::copy_"), std::string::npos) << f->fix;
  EXPECT_EQ(f->fix.rfind("avoid the copies made by aten::contiguous:", 0), 0u) << f->fix;
}

}  // namespace
