// The analyze pipeline's parts on real traces: user code from python_function frames,
// ignores, the gate, LLM verdicts folded into rule findings, and the whole pipeline.
#include <gtest/gtest.h>

#include <set>

#include "../src/classify/classify.hpp"
#include "suite_support.hpp"
#include "ttap/catalog.hpp"
#include "ttap/load.hpp"

namespace {

using namespace ttap;
using ttap::suite::data_path;

struct Loaded {
  Trace trace;
  EventTree tree;
};
Loaded load(const std::string& name) {
  Trace t = load_trace(data_path(name));
  EventTree tree = EventTree::build(t);
  return {std::move(t), std::move(tree)};
}

AnalyzeSettings rules_settings() {
  AnalyzeSettings s;
  s.score.scorer = Scorer::rules;  // no model file needed: the test must not depend on training
  return s;
}

TEST(AnalyzePipeline, UserCodeSkipsLibraryFrames) {
  // vit: every aten::addmm runs under transformers' and torch's frames, which sit under the
  // user's package (moca/...); the user frame is what a person edits.
  const Loaded l = load("tracelens_vit_nsfw_h100.json.gz");
  std::vector<EventId> addmm;
  for (EventId e = 0; e < l.trace.size(); ++e)
    if (l.trace.name_of(e) == "aten::addmm") addmm.push_back(e);
  ASSERT_FALSE(addmm.empty());
  const auto locs = user_code_locations(l.trace, l.tree, addmm);
  ASSERT_FALSE(locs.empty());
  for (const auto& loc : locs) {
    EXPECT_TRUE(loc.file.starts_with("moca/")) << loc.file;
    EXPECT_GT(loc.line, 0);
    EXPECT_FALSE(loc.function.empty());
  }
  // A trace without python_function events has no user code to show.
  const Loaded k = load("kineto_resnet50_v100_nw0.json.gz");
  std::vector<EventId> some;
  for (EventId e = 0; e < k.trace.size() && some.size() < 50; ++e) some.push_back(e);
  EXPECT_TRUE(user_code_locations(k.trace, k.tree, some).empty());
}

TEST(AnalyzePipeline, RealTraceFindingsAreCatalogIdsInsideTopWindows) {
  const Loaded l = load("kineto_resnet50_v100_nw0.json.gz");
  const TraceReport r = analyze_trace(l.trace, l.tree, rules_settings());
  EXPECT_EQ(r.scorer, "rules");
  ASSERT_EQ(r.windows.size(), 100u);
  ASSERT_FALSE(r.flagged.empty());
  double mean = 0;
  for (const auto& w : r.windows) mean += w.score / 100.0;
  EXPECT_NEAR(r.score, mean, 1e-9);
  // The top windows first, then the rules across the whole steady state: this V100 run
  // trains in FP32, 22% of its GEMM/conv time without tensor cores, spread over every
  // window; the dataloader stall the windows report is not repeated there.
  ASSERT_GE(r.flagged.size(), 2u);
  const FlaggedWindow& whole = r.flagged.back();
  ASSERT_TRUE(whole.steady_state);
  EXPECT_EQ(whole.begin, r.begin);
  EXPECT_EQ(whole.end, r.end);
  std::set<std::string> window_ids, whole_ids;
  for (const auto& fw : r.flagged)
    for (const auto& f : fw.findings) (fw.steady_state ? whole_ids : window_ids).insert(f.id);
  EXPECT_TRUE(window_ids.count("dataloader_stall"));
  EXPECT_TRUE(whole_ids.count("fp32_no_tensor_cores"));
  for (const auto& id : whole_ids) EXPECT_FALSE(window_ids.count(id)) << id;
  for (const auto& f : whole.findings) EXPECT_GE(f.severity, Severity::warning) << f.id;
  for (const auto& fw : r.flagged) {
    if (fw.steady_state) continue;
    EXPECT_LE(&fw - r.flagged.data(), 4);  // at most top_k = 5 windows
    EXPECT_TRUE(r.windows[fw.index].flagged);
    EXPECT_DOUBLE_EQ(r.windows[fw.index].score, fw.score);
    for (const auto& f : fw.findings) {
      EXPECT_TRUE(is_catalog_id(f.id)) << f.id;
      EXPECT_FALSE(f.name.empty());
      EXPECT_FALSE(f.fix.empty());
      EXPECT_EQ(f.source, "rules");
    }
  }
  // The windows' GPU busy shares are the timeline's busy time, window by window.
  int64_t busy = 0;
  for (const auto& w : r.windows) busy += static_cast<int64_t>(w.gpu_busy * static_cast<double>(w.end - w.begin));
  EXPECT_GT(busy, 0);
  // A pageable-copy finding carries the trace's what-if estimate for the same id.
  bool saw_saving = false;
  for (const auto& fw : r.flagged)
    for (const auto& f : fw.findings)
      if (f.saving) {
        EXPECT_EQ(f.saving->id, f.id);
        saw_saving = true;
      }
  EXPECT_TRUE(saw_saving);
}

TEST(AnalyzePipeline, IgnoresSuppressAndUnflag) {
  const Loaded l = load("kineto_resnet50_v100_nw0.json.gz");
  const TraceReport before = analyze_trace(l.trace, l.tree, rules_settings());
  ASSERT_FALSE(before.flagged.empty());
  const std::string id = before.flagged[0].findings[0].id;
  AnalyzeSettings s = rules_settings();
  s.ignores.push_back({id, "", "", "known"});
  const TraceReport after = analyze_trace(l.trace, l.tree, s);
  EXPECT_GT(after.suppressed, 0u);
  for (const auto& fw : after.flagged)
    for (const auto& f : fw.findings) EXPECT_NE(f.id, id);
  // A trace glob that matches suppresses everything; one that does not, nothing.
  s.ignores = {{"", "", "*resnet50*", ""}};
  const TraceReport all = analyze_trace(l.trace, l.tree, s);
  EXPECT_TRUE(all.flagged.empty());
  EXPECT_EQ(all.verdict, Verdict::clean);
  for (const auto& w : all.windows) EXPECT_FALSE(w.flagged);
  s.ignores = {{"", "", "*qwen*", ""}};
  EXPECT_EQ(analyze_trace(l.trace, l.tree, s).suppressed, 0u);
}

TEST(AnalyzePipeline, IgnoreByFileNeedsALocation) {
  Finding f;
  f.id = "host_sync";
  f.locations.push_back({"src/train/metrics.py", 88, "log"});
  EXPECT_TRUE(ignore_matches({"host_sync", "*/metrics.py", "", ""}, "t.json", f));
  EXPECT_FALSE(ignore_matches({"host_sync", "*/model.py", "", ""}, "t.json", f));
  EXPECT_FALSE(ignore_matches({"gpu_idle", "*/metrics.py", "", ""}, "t.json", f));
  EXPECT_FALSE(ignore_matches({"", "", "", "no fields"}, "t.json", f)) << "an empty ignore must not match everything";
  f.locations.clear();
  EXPECT_FALSE(ignore_matches({"host_sync", "*", "", ""}, "t.json", f));
}

TEST(AnalyzePipeline, GateBySeverityAndScore) {
  TraceReport t;
  t.score = 0.4;
  Finding info;
  info.id = "gpu_idle";
  info.severity = Severity::info;
  t.flagged.push_back({0, 0, 1, 0.9, {info}});
  apply_gate(t, FailOn::warning, std::nullopt);
  EXPECT_EQ(t.verdict, Verdict::clean) << "info findings alone do not flag a trace";
  EXPECT_FALSE(t.gate_failed);
  t.flagged[0].findings[0].severity = Severity::warning;
  apply_gate(t, FailOn::warning, std::nullopt);
  EXPECT_TRUE(t.gate_failed);
  EXPECT_EQ(t.verdict, Verdict::flagged);
  apply_gate(t, FailOn::error, std::nullopt);
  EXPECT_FALSE(t.gate_failed);
  apply_gate(t, FailOn::none, 0.5);
  EXPECT_FALSE(t.gate_failed);
  apply_gate(t, FailOn::none, 0.4);
  EXPECT_TRUE(t.gate_failed) << "the score reaching --fail-score fails the gate";
}

TEST(AnalyzePipeline, LlmVerdictConfirmsAddsAndIgnoresUnknownIds) {
  const std::vector<Saving> savings{{"host_sync", "keep values on the device", 2'000'000, 0.1, "replay"}};
  Finding rule;
  rule.id = "launch_bound";
  rule.source = "rules";
  rule.confidence = 0.5;
  std::vector<Finding> fs{rule};
  LlmVerdict failed;
  failed.ok = false;
  failed.ids = {"host_sync"};
  merge_llm_verdict(fs, failed, savings);
  ASSERT_EQ(fs.size(), 1u) << "a failed request changes nothing";

  LlmVerdict v;
  v.ok = true;
  v.ids = {"launch_bound", "host_sync", "not_an_id"};
  v.confidence = 0.8;
  v.explanation = "many tiny kernels and a sync per step";
  merge_llm_verdict(fs, v, savings);
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(fs[0].source, "rules+llm");
  EXPECT_DOUBLE_EQ(fs[0].confidence, 0.8);
  EXPECT_EQ(fs[1].id, "host_sync");
  EXPECT_EQ(fs[1].source, "llm");
  EXPECT_EQ(fs[1].fix, find_anti_pattern("host_sync")->fix);
  ASSERT_TRUE(fs[1].saving.has_value());
  EXPECT_EQ(fs[1].saving->saved_per_step, 2'000'000);
}

}  // namespace
