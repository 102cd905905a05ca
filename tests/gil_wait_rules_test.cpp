// GPU idle while the loop's thread waits for the GIL (audit7: the GPU zoo's reports read as the
// job's author). A call into torch ("<built-in method conv2d>") returns a few microseconds after
// its last op; in the zoo's recordings with stacks the loop's thread stays in such calls for
// 0.1-1.4 ms after their ops returned, while another thread of the process runs Python (30 of
// 31 times the DataLoader's pin-memory thread taking a batch from the workers), the GPU idle. gpu_idle called that "profiled frames
// with no op under them" and told the author of a good run to move "per-step Python work
// (metrics, logging, data handling, a loop over parameters)" off the step path: code the step
// does not have. Fixtures: tests/data/gpu_zoo/ (scripts/dataset/make_gpu_zoo.py on an H200).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../src/rules/rule_index.hpp"
#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::find_finding;
using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

const Loaded& zoo(const std::string& name) { return ttap::rules_support::load(ttap::test::data("gpu_zoo/" + name)); }

const std::string* host_line(const ttap::RuleFinding& f) {
  for (const std::string& e : f.evidence)
    if (e.rfind("the host in those gaps: ", 0) == 0) return &e;
  return nullptr;
}

// gpuzoo_0032, ResNet-18 inference (a good run, recorded with stacks): the two top windows of
// analyze are 259 us of GPU idle with the loop's thread in <built-in method conv2d> and
// <built-in method batch_norm> 1.2 ms and 1.0 ms after their ops returned, while the
// pin-memory thread unpickles, pins and queues the next batch.
TEST(GilWaitRules, IdleInACallIntoTorchAfterItsOpsReturnedIsAWaitForTheGil) {
  const Loaded& l = zoo("gpuzoo_0032_resnet18_inference.json.gz");
  const ttap::rules::RuleIndex ix(l.trace, l.tree);
  // Each wait is a real stay, and most of their time lies under the pin-memory thread's Python
  // (one 138 us wait in a .to() lies under the multiprocessing queue's feeder thread).
  ASSERT_GE(ix.gil_waits.size(), 2u);
  int64_t all = 0, pin = 0;
  for (size_t i = 0; i < ix.gil_waits.size(); ++i) {
    const int64_t len = ix.gil_waits[i].second - ix.gil_waits[i].first;
    EXPECT_GE(len, ttap::rules::kMinGilWait);
    all += len;
    pin += ix.gil_wait_pin_memory[i] ? len : 0;
  }
  EXPECT_GT(pin, all * 3 / 4) << pin << " of " << all;
  for (auto [b, e] : {std::pair<int64_t, int64_t>{4690904211430426, 4690904211688941},
                      std::pair<int64_t, int64_t>{4690904202382396, 4690904202640912}}) {
    const auto found = l.engine->detect(b, e);
    const ttap::RuleFinding* idle = find_finding(found, "gpu_idle");
    ASSERT_NE(idle, nullptr) << findings_text(found);
    const std::string* line = host_line(*idle);
    ASSERT_NE(line, nullptr) << findings_text(found);
    EXPECT_EQ(*line,
              "the host in those gaps: 259 us in calls into torch after their ops returned, while the DataLoader's "
              "pin-memory thread ran Python: waiting for the GIL");
    EXPECT_EQ(idle->fix.rfind("most of this idle the loop's thread waits for the GIL", 0), 0u) << idle->fix;
    EXPECT_NE(idle->fix.find("with_stack=True"), std::string::npos) << idle->fix;
    EXPECT_EQ(idle->fix.find("metrics, logging"), std::string::npos) << idle->fix;
  }
}

// The step's own Python with no op under it stays the frames' (gpuzoo_0014's window of 221 us in
// zoo.py's fetch); and a trace recorded without stacks (gpuzoo_0001) has no Python frames, so no
// wait is found in it.
TEST(GilWaitRules, OwnPythonAndTracesWithoutStacksAreNotGilWaits) {
  const Loaded& l = zoo("gpuzoo_0014_depth_resnet18_unet_inference.json.gz");
  const auto found = l.engine->detect(4690860770038245, 4690860770259742);
  const ttap::RuleFinding* idle = find_finding(found, "gpu_idle");
  ASSERT_NE(idle, nullptr) << findings_text(found);
  const std::string* line = host_line(*idle);
  ASSERT_NE(line, nullptr) << findings_text(found);
  EXPECT_NE(line->find("in profiled frames with no op under them"), std::string::npos) << *line;
  EXPECT_EQ(line->find("GIL"), std::string::npos) << *line;

  const Loaded& plain = zoo("gpuzoo_0001_resnet50_inference.json.gz");
  EXPECT_TRUE(ttap::rules::RuleIndex(plain.trace, plain.tree).gil_waits.empty());
}

}  // namespace
