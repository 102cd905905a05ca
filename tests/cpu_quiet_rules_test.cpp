// cpu_bound_step on traces without a GPU (issue 12 item 1): there the model's compute is the
// training thread's ops, so a stretch of the step where that thread records nothing (numpy
// statistics, logging, unprofiled Python) is time the step waits, as a GPU waits on host
// work. Traces: zoo runs of the labeled corpus (data/ttap-bench, train split; recorded on
// CPU with torch's profiler) and HTA's CPU-only trace (tests/data).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

const Loaded* corpus_trace(const std::string& name) {
  const std::string path = std::string(TTAP_SOURCE_DIR) + "/data/ttap-bench/traces/" + name;
  return fs::exists(path) ? &ttap::rules_support::load(path) : nullptr;
}

// zoo_0203 (diffusion UNet inference, 2 steps of ~125 ms, labeled cpu_bound_step): after its
// last op, step 2 spends 90 ms in host-side statistics that torch's profiler does not see.
// Every window in that stretch names cpu_bound_step first, its cost inside the window, and
// the longest stretch is the one read off the trace: from the end of the step's last event
// on the training thread to the step's end.
TEST(CpuQuietRules, AStretchWithNoOpInACpuStepIsCpuBound) {
  const Loaded* l = corpus_trace("zoo_0203_diffusion_unet_inference.json.gz");
  if (l == nullptr) GTEST_SKIP() << "data/ttap-bench is missing";
  const ttap::Trace& t = l->trace;
  const auto& steps = l->tree.steps();
  ASSERT_EQ(steps.size(), 2u);
  const ttap::Step& last = steps.back();
  int64_t last_end = last.ts;  // the end of the last event under step 2 on its thread
  for (ttap::EventId e = 0; e < t.size(); ++e)
    if (e != last.event && t.track[e] == t.track[last.event] && t.ts[e] >= last.ts && t.ts[e] < last.end)
      last_end = std::max(last_end, t.end(e));
  const int64_t quiet = last.end - last_end;
  ASSERT_GT(quiet, (last.end - last.ts) / 2) << "the stretch this test is about";
  const std::regex longest(R"(^longest: ([0-9.]+) ms \(([0-9]+)% of a [0-9.]+ ms step\) from the end of (\S+) to the last step's end$)");
  size_t judged = 0;
  for (auto [b, e] : l->windows) {
    if (b < last_end || e > last.end) continue;
    ++judged;
    const auto found = l->engine->detect(b, e);
    ASSERT_FALSE(found.empty()) << b;
    const ttap::RuleFinding& f = found.front();
    EXPECT_EQ(f.id, "cpu_bound_step") << findings_text(found);
    EXPECT_EQ(f.cost, e - b) << "the whole window is the stretch\n" << findings_text(found);
    EXPECT_GE(f.begin, b);
    EXPECT_LE(f.end, e);
    ASSERT_EQ(f.evidence.size(), 2u) << findings_text(found);
    EXPECT_EQ(f.evidence[0].rfind("the training thread records no event for ", 0), 0u) << f.evidence[0];
    std::smatch m;
    ASSERT_TRUE(std::regex_match(f.evidence[1], m, longest)) << f.evidence[1];
    EXPECT_NEAR(std::stod(m[1].str()) * 1e6, static_cast<double>(quiet), 0.05e6) << f.evidence[1];
  }
  EXPECT_GE(judged, 30u);
}

// The clean run of the same kind (zoo_0209, ResNet-50 training on CPU, no pattern) pauses
// between ops only as the interpreter does: no window is cpu_bound_step.
TEST(CpuQuietRules, ACleanCpuRunHasNone) {
  const Loaded* l = corpus_trace("zoo_0209_resnet50_train.json.gz");
  if (l == nullptr) GTEST_SKIP() << "data/ttap-bench is missing";
  for (auto [b, e] : l->windows)
    for (const auto& f : l->engine->detect(b, e)) EXPECT_NE(f.id, "cpu_bound_step") << b << "\n" << findings_text({f});
}

// HTA's CPU-only trace: one 210 ms step whose work ran on other threads; the thread that
// holds the step records nothing inside it, and that is not a stretch between its own ops.
TEST(CpuQuietRules, AStepWhoseWorkRanElsewhereIsNotCpuBound) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("hta_cpu_only.json.gz"));
  ASSERT_EQ(l.tree.steps().size(), 1u);
  for (auto [b, e] : l.windows)
    for (const auto& f : l.engine->detect(b, e)) EXPECT_NE(f.id, "cpu_bound_step") << findings_text({f});
}

}  // namespace
