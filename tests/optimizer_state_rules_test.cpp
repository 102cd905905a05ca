// Blame that names a real fix (issue 12 item 0): Adam and AdamW, unless fused or capturable,
// keep each parameter's step count in a CPU tensor; every step they add one to each
// (aten::_foreach_add_ over the counters, one aten::add_ each) and read each back for the
// bias correction (aten::item), on the host while the GPU has nothing queued. cpu_bound_step
// told users to "move aten::_foreach_add_ off the step path (into DataLoader workers or a
// background thread)", which no one can do with the optimizer's own bookkeeping; the fix is
// AdamW(..., fused=True) (or capturable=True), or a compiled optimizer step.
// Trace: the GPU workload zoo's clean ResNet-18 training with AdamW on an H200 (gpuzoo_0064,
// nothing injected, with_stack; tests/data/gpu_zoo/, make_gpu_zoo.py --seed 2026).
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using namespace ttap;

TEST(OptimizerStateRules, AdamStepCountersOnTheHostGetTheFusedFix) {
  const rules_support::Loaded& l = rules_support::load(test::data("gpu_zoo/gpuzoo_0064_resnet18_train.json.gz"));
  size_t counters = 0;
  for (auto [b, e] : l.windows)
    for (const RuleFinding& f : l.engine->detect(b, e)) {
      if (f.id != "cpu_bound_step" || f.fix.find("aten::_foreach_add_") == std::string::npos) continue;
      ++counters;
      EXPECT_EQ(f.fix.find("DataLoader workers"), std::string::npos) << rules_support::findings_text({f});
      EXPECT_NE(f.fix.find("inside Optimizer.step#AdamW.step"), std::string::npos) << rules_support::findings_text({f});
      EXPECT_NE(f.fix.find("fused=True"), std::string::npos) << rules_support::findings_text({f});
    }
  EXPECT_GE(counters, 1u);
}

}  // namespace
