// A synchronize that the profiling harness makes, not the job: moca's run_torch_profiler
// (moca/library/profiling/profile.py:34) calls torch.cuda.synchronize() to time each recorded
// step. host_sync's fix read "remove torch.cuda.synchronize() at
// moca/library/profiling/profile.py:34 from the step loop", as if the job's loop held it; it
// says whose call it is and what it costs (the recorded run, not production). Traces: TraceLens'
// Qwen2.5-0.5B on an H100 (the harness's sync), xDiT's Flux capture (its _run_timed_pipe times
// the compile warm-up; its _run_compile_warmup syncs without timing) and the GPU zoo's depth
// U-Net (zoo.py's syncs are the job's).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "../src/rules/rule_index.hpp"
#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::Loaded;

// Each synchronizing call's innermost user frame with its harness frame's function ("-" for
// none).
std::set<std::pair<std::string, std::string>> harness_by_user_frame(const Loaded& l) {
  const ttap::rules::RuleIndex ix(l.trace, l.tree);
  std::set<std::pair<std::string, std::string>> out;
  for (ttap::EventId e = 0; e < l.trace.size(); ++e) {
    if (l.trace.name_of(e).find("Synchronize") == std::string_view::npos) continue;
    const ttap::EventId user = ttap::rules::user_frame_above(ix, e);
    if (user == ttap::kNoEvent) continue;
    const auto harness = ttap::rules::harness_frame(ix, e);
    out.emplace(l.trace.name_of(user), harness ? harness->function : "-");
  }
  return out;
}

TEST(HarnessSyncRules, TheProfilersTimingSyncIsTheHarnesssTheModelsReadIsTheJobs) {
  const auto syncs = harness_by_user_frame(
      ttap::rules_support::load(ttap::test::data("tracelens_qwen05b_h100.json.gz")));
  // The harness's timing sync, and torch.profiler's own as it stops the trace (profiler.py:
  // stop_trace synchronizes), called from the same line.
  const std::set<std::pair<std::string, std::string>> expected = {
      {"moca/library/profiling/profile.py(34): run_torch_profiler", "run_torch_profiler"},
      {"moca/library/profiling/profile.py(34): run_torch_profiler", "stop_trace"},
      // The model's own read inside the harness (profile_model_pipeline.py: profile holds the
      // whole run) is not the harness's: the innermost user frame decides.
      {"transformers/modeling_attn_mask_utils.py(243): _ignore_causal_mask_sdpa", "-"}};
  EXPECT_EQ(syncs, expected);
}

TEST(HarnessSyncRules, OnlyFramesNamedForTimingAreHarnesses) {
  const auto xdit = harness_by_user_frame(
      ttap::rules_support::load(ttap::test::data("tracelens_xdit_flux1_capture.json.gz")));
  const std::string base = "xDiT/xfuser/model_executor/models/runner_models/base_model.py";
  EXPECT_TRUE(xdit.count({base + "(677): _run_timed_pipe", "_run_timed_pipe"}));
  EXPECT_TRUE(xdit.count({base + "(713): _run_compile_warmup", "-"}));
  EXPECT_FALSE(xdit.count({base + "(713): _run_compile_warmup", "_run_compile_warmup"}));
  // The zoo's syncs in its step (fetch, move) are the job's; only torch.profiler's stop is not.
  const auto zoo = harness_by_user_frame(
      ttap::rules_support::load(ttap::test::data("gpu_zoo/gpuzoo_0014_depth_resnet18_unet_inference.json.gz")));
  size_t job = 0;
  for (const auto& [frame, harness] : zoo) {
    EXPECT_TRUE(harness == "-" || harness == "stop_trace") << frame << " " << harness;
    job += harness == "-";
  }
  EXPECT_GE(job, 2u);
}

TEST(HarnessSyncRules, TheFixSaysWhoseSyncItIsAndKeepsItsCost) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("tracelens_qwen05b_h100.json.gz"));
  size_t harness_fixes = 0;
  for (auto [b, e] : l.windows) {
    const auto found = l.engine->detect(b, e);
    const ttap::RuleFinding* f = ttap::rules_support::find_finding(found, "host_sync");
    if (f == nullptr || f->locations.empty() || f->locations[0].function != "run_torch_profiler") continue;
    ++harness_fixes;
    EXPECT_EQ(f->fix.find("remove torch.cuda.synchronize()"), std::string::npos) << f->fix;
    EXPECT_EQ(f->fix,
              "torch.cuda.synchronize() at moca/library/profiling/profile.py:34 is the profiling or timing harness's "
              "(run_torch_profiler), not the job's: it costs the recorded run, not production; time the steps with "
              "CUDA events read after them, or synchronize outside the recorded steps");
    // What it cost the recorded steps is measured as before; only whose call it is changed.
    EXPECT_FALSE(f->one_time);
  }
  EXPECT_GE(harness_fixes, 3u);
}

}  // namespace
