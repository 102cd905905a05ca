// One finding per problem (src/classify/grouping.cpp) on real traces: the controlled
// DataLoader pair's num_workers=0 run has one dataloader_stall problem (its 6 stalls, one
// per step, ~60.1 ms a step to save), every window finding lands in exactly one group,
// every renderer shows the groups, and --fail-savings gates on the recoverable share.
// The rule scorer is named so the results do not depend on a trained model.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <map>
#include <set>

#include "../src/classify/classify.hpp"
#include "suite_support.hpp"
#include "ttap/load.hpp"

namespace {

using namespace ttap;
using ttap::suite::data_path;
using ttap::suite::ProcResult;
using ttap::suite::run_ttap;

const std::string kNw0 = data_path("kineto_resnet50_v100_nw0.json.gz");
const std::string kVit = data_path("tracelens_vit_nsfw_h100.json.gz");

TraceReport analyze_rules(const std::string& path) {
  const Trace t = load_trace(path);
  const EventTree tree = EventTree::build(t);
  AnalyzeSettings s;
  s.score.scorer = Scorer::rules;
  return analyze_trace(t, tree, s);
}

using ttap::suite::analyze;

using suite::count_of;

TEST(GroupedFindings, Nw0HasOneDataloaderStallWithItsSixStalls) {
  const TraceReport r = analyze_rules(kNw0);
  ASSERT_GE(r.findings.size(), 1u);
  size_t windows_with_it = 0;
  for (const FlaggedWindow& w : r.flagged)
    for (const Finding& f : w.findings) windows_with_it += f.id == "dataloader_stall";
  ASSERT_GE(windows_with_it, 2u) << "several windows report the stall; grouping must fold them";
  size_t groups = 0;
  for (const GroupedFinding& g : r.findings) groups += g.id == "dataloader_stall";
  EXPECT_EQ(groups, 1u);
  const GroupedFinding& g = r.findings.front();
  EXPECT_EQ(g.id, "dataloader_stall") << "the largest saving ranks first";
  EXPECT_EQ(g.origin, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  EXPECT_EQ(g.severity, Severity::error);
  EXPECT_EQ(g.occurrence_count, 6u) << "one stall per step, 6 steps";
  EXPECT_EQ(g.steps.size(), 6u);
  EXPECT_EQ(g.windows.size(), windows_with_it);
  ASSERT_TRUE(g.saving);
  EXPECT_NEAR(static_cast<double>(g.saving->saved_per_step) / 1e6, 60.05, 0.1);
  EXPECT_NEAR(g.rank_share, 0.343, 0.005);
  // Its cost per step is the GPU idle inside the loader spans, within one step's time.
  ASSERT_TRUE(g.cost_per_step);
  EXPECT_GT(*g.cost_per_step, g.saving->saved_per_step / 2);
  EXPECT_LT(*g.cost_per_step, r.headline.step_mean);
  EXPECT_NEAR(g.share, static_cast<double>(*g.cost_per_step) / static_cast<double>(r.headline.step_mean), 1e-9);
  // The occurrences shown are in time order, inside the steady state, each in its own step.
  ASSERT_FALSE(g.occurrences.empty());
  for (size_t i = 0; i < g.occurrences.size(); ++i) {
    EXPECT_GE(g.occurrences[i].begin, r.begin);
    EXPECT_LE(g.occurrences[i].end, r.end);
    EXPECT_LT(g.occurrences[i].begin, g.occurrences[i].end);
    EXPECT_GE(g.occurrences[i].step, 0);
    if (i > 0) {
      EXPECT_GT(g.occurrences[i].begin, g.occurrences[i - 1].end);
      EXPECT_GT(g.occurrences[i].step, g.occurrences[i - 1].step);
    }
  }
  // Fixing everything recovers at least what the stall alone would, and never more than all.
  EXPECT_GE(r.recoverable_share, g.rank_share);
  EXPECT_LE(r.recoverable_share, 1.0);
}

TEST(GroupedFindings, EveryFindingLandsInOneGroupRankedBySaving) {
  for (const std::string& path : {kNw0, kVit, data_path("hta_ddp_a100_nccl.json.gz")}) {
    const TraceReport r = analyze_rules(path);
    std::map<std::pair<std::string, std::string>, size_t> seen;  // (id, origin) -> places
    for (const FlaggedWindow& w : r.flagged)
      for (const Finding& f : w.findings) ++seen[{f.id, f.origin}];
    ASSERT_EQ(seen.size(), r.findings.size()) << path;
    for (size_t i = 0; i < r.findings.size(); ++i) {
      const GroupedFinding& g = r.findings[i];
      ASSERT_TRUE(seen.count({g.id, g.origin})) << path << ": " << g.id << " in " << g.origin;
      const size_t places = seen[{g.id, g.origin}];
      EXPECT_EQ(g.windows.size() + (g.steady_state ? 1 : 0), places) << path << ": " << g.id;
      EXPECT_GE(g.occurrence_count, 1u);
      EXPECT_GE(g.share, 0.0);
      EXPECT_LE(g.share, 1.0);
      Severity worst = Severity::info;
      for (const FlaggedWindow& w : r.flagged)
        for (const Finding& f : w.findings)
          if (f.id == g.id && f.origin == g.origin) worst = std::max(worst, f.severity);
      EXPECT_EQ(g.severity, worst) << "a group is as severe as its most severe finding";
      if (i > 0) {
        EXPECT_GE(r.findings[i - 1].rank_share, g.rank_share) << path;
      }
    }
  }
}

TEST(GroupedFindings, TextShowsOneLinePerProblemAndDetailsOnRequest) {
  const ProcResult r = analyze({kNw0});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(count_of(r.out, "dataloader_stall: GPU starved"), 1u) << r.out;
  EXPECT_NE(r.out.find("1. error dataloader_stall"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("6 occurrences in steps 5-10"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("what-if: fixing it saves ~60.1 ms per step (34.3%)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("]  score "), std::string::npos) << "per-window detail only with --details";
  const ProcResult details = analyze({"--details", kNw0});
  EXPECT_GT(count_of(details.out, "dataloader_stall: GPU starved"), 2u) << details.out;
  EXPECT_NE(details.out.find("flagged windows (--details):"), std::string::npos);
  EXPECT_NE(details.out.find("]  score "), std::string::npos) << details.out;
}

TEST(GroupedFindings, JsonSarifJunitAndMarkdownCarryTheGroups) {
  simdjson::dom::parser p;
  const ProcResult json = analyze({"--format", "json", "--fail-on", "none", kNw0});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(json.out).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(doc["schema"]), "ttap.analyze/2");
  auto trace = doc["traces"].at(0);
  auto groups = trace["findings"].get_array();
  EXPECT_EQ(uint64_t(doc["summary"]["findings"]), groups.size());
  EXPECT_GT(uint64_t(doc["summary"]["window_findings"]), groups.size()) << "per-window detail stays in flagged_windows";
  auto first = groups.at(0);
  EXPECT_EQ(std::string_view(first["id"]), "dataloader_stall");
  EXPECT_EQ(uint64_t(first["occurrence_count"]), 6u);
  EXPECT_EQ(first["steps"].get_array().size(), 6u);
  EXPECT_NEAR(double(first["saving"]["step_share"]), 0.343, 0.005);
  EXPECT_TRUE(first["baseline_state"].is_null());
  EXPECT_GT(double(trace["recoverable_share"]), 0.27);
  EXPECT_TRUE(trace["baseline"].is_null());
  for (auto w : trace["flagged_windows"].get_array())
    for (auto f : w["findings"].get_array()) EXPECT_FALSE(std::string_view(f["origin"]).empty());

  // SARIF: one result per problem, each with its own fingerprint, the same in every run.
  auto fingerprints = [&](const std::vector<std::string>& traces) {
    std::vector<std::string> args{"--format", "sarif", "--fail-on", "none"};
    args.insert(args.end(), traces.begin(), traces.end());
    const ProcResult s = analyze(args);
    simdjson::dom::parser sp;
    simdjson::dom::element sd;
    EXPECT_EQ(sp.parse(s.out).get(sd), simdjson::SUCCESS);
    std::vector<std::string> out;
    for (auto res : sd["runs"].at(0)["results"].get_array())
      out.emplace_back(std::string_view(res["partialFingerprints"]["ttapFinding/v2"]));
    return out;
  };
  const auto once = fingerprints({kNw0, kVit});
  EXPECT_EQ(once.size(), groups.size() + analyze_rules(kVit).findings.size());
  EXPECT_EQ(std::set<std::string>(once.begin(), once.end()).size(), once.size()) << "one fingerprint per result";
  EXPECT_EQ(fingerprints({kNw0, kVit}), once) << "stable across runs";

  const ProcResult junit = analyze({"--format", "junit", kNw0});
  EXPECT_EQ(count_of(junit.out, "dataloader_stall: GPU starved"), 1u) << junit.out;
  EXPECT_NE(junit.out.find("6 occurrences in steps 5-10"), std::string::npos);
  const ProcResult md = analyze({"--format", "md", kNw0});
  EXPECT_NE(md.out.find("| 1 | error | `dataloader_stall` |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("Fixing every finding would recover ~"), std::string::npos);
}

TEST(GroupedFindings, FailSavingsGatesOnTheRecoverableShare) {
  const ProcResult json = analyze({"--format", "json", "--fail-on", "none", kNw0});
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(json.out).get(doc), simdjson::SUCCESS);
  const double pct = 100.0 * double(doc["traces"].at(0)["recoverable_share"]);
  ASSERT_GT(pct, 5.0);
  EXPECT_EQ(analyze({"--fail-on", "none", "--fail-savings", "5", kNw0}).exit_code, 1);
  EXPECT_EQ(analyze({"--fail-on", "none", "--fail-savings", std::to_string(pct - 0.1), kNw0}).exit_code, 1);
  EXPECT_EQ(analyze({"--fail-on", "none", "--fail-savings", std::to_string(pct + 0.1), kNw0}).exit_code, 0);
  EXPECT_EQ(analyze({"--fail-on", "none", "--fail-savings", "150", kNw0}).exit_code, 2) << "a percentage";
  // A CPU-only trace without findings recovers nothing: it passes any bar above 0.
  EXPECT_EQ(analyze({"--fail-on", "none", "--fail-savings", "0.1", data_path("hta_cpu_only.json.gz")}).exit_code, 0);
}

}  // namespace
