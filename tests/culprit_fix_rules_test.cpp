// cpu_bound_step's fix fits the host work it blames (issue 12, item 0), swept over the public
// traces in tests/data. Before, every culprit got "move X off the step path (into DataLoader
// workers or a background thread) or onto the GPU", which no user can act on for:
// - DistributedDataParallel's buffer broadcast, aten::unflatten_dense_tensors under
//   DistributedDataParallel.forward (hta_ddp_a100_nccl: up to 15 ms a call);
// - a zero_grad that launches nothing (PARAM DLRM's "## zero_grad ##" on its ranks);
// - an op that computes nothing, aten::empty or aten::detach taking hundreds of microseconds
//   (hta_ddp_a100_nccl, PARAM DLRM rank 0): the host running slowly, not work to move.
// Graph capture and compiled-graph calls: tests/graph_capture_rules_test.cpp.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

const Loaded& trace(const std::string& name) { return ttap::rules_support::load(ttap::test::data(name)); }

// The old advice for a culprit it cannot help.
const std::regex kLoaderAdviceForNonLoaderWork(
    R"(^move (aten::unflatten_dense_tensors|## zero_grad ##|aten::(empty|empty_like|detach|to|t|expand|slice|view))( \(|\s)[^]*into DataLoader workers)");

// Each cpu_bound_step finding in the trace's 100 steady-state windows whose fix contains
// `fix_part`, after checking that none gives the old loader advice for such a culprit.
size_t fixes_containing(const Loaded& l, const std::string& fix_part) {
  size_t n = 0;
  for (auto [b, e] : l.windows)
    for (const ttap::RuleFinding& f : l.engine->detect(b, e)) {
      if (f.id != "cpu_bound_step") continue;
      EXPECT_FALSE(std::regex_search(f.fix, kLoaderAdviceForNonLoaderWork)) << b << "\n" << findings_text({f});
      if (f.fix.find(fix_part) != std::string::npos) ++n;
    }
  return n;
}

TEST(CulpritFixRules, DdpBufferBroadcastIsNamedWithItsSwitch) {
  const Loaded& l = trace("hta_ddp_a100_nccl.json.gz");
  EXPECT_GE(fixes_containing(l, "aten::unflatten_dense_tensors is DistributedDataParallel's buffer broadcast at each "
                                "forward (broadcast_buffers=True, the default): DistributedDataParallel(..., "
                                "broadcast_buffers=False)"),
            5u);
}

TEST(CulpritFixRules, ZeroGradThatLaunchesNothingIsNotLoaderWork) {
  const Loaded& l = trace("param_dlrm_v100_8ranks/rank2.json.gz");
  EXPECT_GE(fixes_containing(l, "## zero_grad ## launches nothing (gradients set to None)"), 1u);
}

TEST(CulpritFixRules, AnOpThatComputesNothingIsNotWorkToMove) {
  EXPECT_GE(fixes_containing(trace("hta_ddp_a100_nccl.json.gz"), "computes nothing (it sets up a tensor or a view)"), 1u);
  fixes_containing(trace("param_dlrm_v100_8ranks/rank0.json.gz"), "");
}

// The advice that fits stays: real CPU tensor work on the step path (aten::cat, sort and
// histc on CPU tensors in tests/data/rules' cpu_bound_step trace) is still to be moved off
// it or onto the GPU.
TEST(CulpritFixRules, RealCpuWorkKeepsTheMoveItAdvice) {
  const Loaded& l = trace("rules/vit_nsfw_h100_cpu_bound_step.json.gz");
  EXPECT_GE(fixes_containing(l, "off the step path (into DataLoader workers or a background thread) or onto the GPU"), 1u);
}

}  // namespace
