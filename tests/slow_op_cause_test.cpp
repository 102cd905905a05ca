// gpu_idle's fix for idle the host spends inside slow ops named one cause list for any op: "a
// first call (cuDNN autotuning under torch.backends.cudnn.benchmark=True, lazy initialization),
// a blocking copy inside the op, or CPU work in it", also for hta_sampled_rank0's optimizer
// ops, an aten::_foreach_mul_ that holds the host 117 ms around 7 launches and has no
// convolution, no copy call in it. The fix names the ops that hold the time and the cause each
// can have from what the trace shows: autotuning only for convolutions (hta_alexnet_a100_small's
// first aten::conv2d), a blocking copy only where a copy or sync call inside the op holds the
// host, else host work between its launches.
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::Loaded;

constexpr const char* kSlowOps = "most of this idle the host spends inside slow ops";

// Every window's gpu_idle fix about slow ops.
std::vector<std::string> slow_op_fixes(const Loaded& l) {
  std::vector<std::string> fixes;
  for (auto [b, e] : l.windows)
    for (const ttap::RuleFinding& f : l.engine->detect(b, e))
      if (f.id == "gpu_idle" && f.fix.starts_with(kSlowOps)) fixes.push_back(f.fix);
  return fixes;
}

TEST(SlowOpCause, AnOptimizerOpThatLaunchesNothingForLongIsHostWorkNotAutotuning) {
  const auto fixes = slow_op_fixes(ttap::rules_support::load(ttap::test::data("hta_sampled_rank0.json.gz")));
  ASSERT_FALSE(fixes.empty());
  bool mul = false;
  for (const std::string& fix : fixes) {
    EXPECT_EQ(fix.find("cuDNN"), std::string::npos) << fix;
    EXPECT_EQ(fix.find("blocking copy"), std::string::npos) << fix;
    EXPECT_NE(fix.find("nothing for long: host work inside"), std::string::npos) << fix;
    mul |= fix.find("aten::_foreach_mul_ (1 call, 117.1 ms of host time, 7 launches, up to 96.7 ms without one)") !=
           std::string::npos;
  }
  EXPECT_TRUE(mul);
}

TEST(SlowOpCause, AConvolutionsFirstCallNamesCudnn) {
  const auto fixes = slow_op_fixes(ttap::rules_support::load(ttap::test::data("hta_alexnet_a100_small.json.gz")));
  ASSERT_FALSE(fixes.empty());
  for (const std::string& fix : fixes) {
    // cuDNN only with a convolution named before it.
    const size_t cudnn = fix.find("cuDNN");
    if (cudnn == std::string::npos) continue;
    EXPECT_NE(fix.rfind("is a convolution", cudnn), std::string::npos) << fix;
    EXPECT_NE(fix.find("aten::conv2d ("), std::string::npos) << fix;
  }
  EXPECT_TRUE(std::any_of(fixes.begin(), fixes.end(),
                          [](const std::string& f) { return f.find("aten::conv2d (") != std::string::npos; }));
}

}  // namespace
