// --baseline on real traces: the controlled DataLoader pair (num_workers=4 as the
// baseline, num_workers=0 fails with dataloader_stall as new), a trace against its own
// report passes, in every format, with a json report or a trace as the baseline; the
// matching rules on their own; bad baselines are exit 2; and the README's CI recipe
// (scripts/ci/ttap-gate.sh) run end to end as a job would run it.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <regex>

#include "../src/classify/classify.hpp"
#include "suite_support.hpp"

namespace {

using namespace ttap;
using ttap::suite::data_path;
using ttap::suite::ProcResult;
using ttap::suite::read_file;
using ttap::suite::run_process;
using ttap::suite::run_ttap;
using ttap::suite::scratch;
using ttap::suite::write_file;
namespace fs = std::filesystem;

const std::string kNw0 = data_path("kineto_resnet50_v100_nw0.json.gz");
const std::string kNw4 = data_path("kineto_resnet50_v100_nw4.json.gz");

using ttap::suite::analyze;

// nw4's json report, made once: the baseline most tests compare with.
const std::string& nw4_report() {
  static const std::string path = [] {
    const std::string out = scratch() + "/nw4_baseline.json";
    const ProcResult r = analyze({"--format", "json", "--fail-on", "none", "-o", out, kNw4});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return out;
  }();
  return path;
}

GroupedFinding group(std::string id, std::string origin, int64_t per_step, Severity s = Severity::warning) {
  GroupedFinding g;
  g.id = std::move(id);
  g.origin = std::move(origin);
  g.cost_per_step = per_step;
  g.share = static_cast<double>(per_step) / 100.0;
  g.severity = s;
  return g;
}

TEST(Baseline, MatchesByIdAndOriginThenById) {
  TraceReport base;
  base.path = "base.json";
  base.findings = {group("host_sync", "aten::item", 10), group("gpu_idle", "aten::mm", 5), group("dataloader_stall", "loader", 20),
                   group("launch_bound", "aten::add", 4)};
  TraceReport now;
  now.findings = {group("host_sync", "aten::item", 11),        // +10%: not more than --regress 10
                  group("gpu_idle", "aten::addmm", 8),         // another origin, matched by id: +60%, worse
                  group("dataloader_stall", "loader", 19),     // unchanged
                  group("pageable_memcpy", "aten::copy_", 3)};  // new
  compare_with_baseline(now, base, 10.0);
  EXPECT_EQ(now.baseline, "base.json");
  EXPECT_EQ(now.findings[0].baseline, BaselineState::unchanged);
  EXPECT_EQ(now.findings[1].baseline, BaselineState::worse);
  ASSERT_TRUE(now.findings[1].baseline_cost_per_step);
  EXPECT_EQ(*now.findings[1].baseline_cost_per_step, 5);
  EXPECT_EQ(now.findings[2].baseline, BaselineState::unchanged);
  EXPECT_EQ(now.findings[3].baseline, BaselineState::added);
  ASSERT_EQ(now.fixed.size(), 1u);
  EXPECT_EQ(now.fixed[0].id, "launch_bound");
  EXPECT_EQ(now.fixed[0].baseline, BaselineState::fixed);
  compare_with_baseline(now, base, 100.0);
  EXPECT_EQ(now.findings[1].baseline, BaselineState::unchanged) << "--regress 100: +60% is not worse";
  // Without steps on one side the share of the steady state is compared instead.
  now.findings[0].cost_per_step.reset();
  now.findings[0].share = 0.5;  // base: 0.10
  compare_with_baseline(now, base, 10.0);
  EXPECT_EQ(now.findings[0].baseline, BaselineState::worse);
}

// Better mirrors worse: the cost per step down by more than --regress percent.
TEST(Baseline, BetterWhenTheCostPerStepFellMoreThanRegress) {
  TraceReport base;
  base.findings = {group("host_sync", "aten::item", 100), group("dataloader_stall", "loader", 100)};
  TraceReport now;
  now.findings = {group("host_sync", "aten::item", 89), group("dataloader_stall", "loader", 91)};
  compare_with_baseline(now, base, 10.0);
  EXPECT_EQ(now.findings[0].baseline, BaselineState::better) << "-11%";
  EXPECT_EQ(now.findings[1].baseline, BaselineState::unchanged) << "-9% is within --regress 10";
  compare_with_baseline(now, base, 50.0);
  EXPECT_EQ(now.findings[0].baseline, BaselineState::unchanged);
  // Better never fails the gate.
  now.findings[0].severity = Severity::error;
  compare_with_baseline(now, base, 10.0);
  apply_gate(now, FailOn::warning, std::nullopt);
  EXPECT_FALSE(now.gate_failed);
}

TEST(Baseline, GateFailsOnlyOnNewOrWorseAtOrAboveFailOn) {
  TraceReport t;
  Finding f;
  f.id = "dataloader_stall";
  f.severity = Severity::error;
  t.flagged.push_back({0, 0, 1, 0.9, {f}});
  t.findings = {group("dataloader_stall", "", 10, Severity::error)};
  t.baseline = "base";
  t.findings[0].baseline = BaselineState::unchanged;
  apply_gate(t, FailOn::warning, std::nullopt);
  EXPECT_EQ(t.verdict, Verdict::flagged) << "the verdict still says what the trace holds";
  EXPECT_FALSE(t.gate_failed) << "an unchanged problem does not fail the gate";
  t.findings[0].baseline = BaselineState::worse;
  apply_gate(t, FailOn::warning, std::nullopt);
  EXPECT_TRUE(t.gate_failed);
  t.findings[0].baseline = BaselineState::added;
  t.findings[0].severity = Severity::warning;
  apply_gate(t, FailOn::error, std::nullopt);
  EXPECT_FALSE(t.gate_failed) << "new, but below --fail-on error";
  apply_gate(t, FailOn::warning, std::nullopt);
  EXPECT_TRUE(t.gate_failed);
  // --fail-savings does not look at the baseline.
  t.findings[0].baseline = BaselineState::unchanged;
  t.recoverable_share = 0.2;
  apply_gate(t, FailOn::warning, std::nullopt, 20.0);
  EXPECT_TRUE(t.gate_failed);
  apply_gate(t, FailOn::warning, std::nullopt, 20.1);
  EXPECT_FALSE(t.gate_failed);
}

TEST(Baseline, Nw0AgainstNw4FailsWithDataloaderStallAsNewInEveryFormat) {
  for (const std::string& base : {nw4_report(), kNw4}) {  // a json report, and the trace itself
    const ProcResult json = analyze({"--format", "json", "--baseline", base, kNw0});
    EXPECT_EQ(json.exit_code, 1) << base << "\n" << json.err;
    simdjson::dom::parser p;
    simdjson::dom::element doc;
    ASSERT_EQ(p.parse(json.out).get(doc), simdjson::SUCCESS);
    auto trace = doc["traces"].at(0);
    EXPECT_TRUE(bool(trace["gate_failed"]));
    EXPECT_EQ(std::string_view(trace["baseline"]["trace"]), kNw4);
    EXPECT_GE(uint64_t(trace["baseline"]["new"]), 1u);
    bool stall_new = false;
    for (auto g : trace["findings"].get_array()) {
      const std::string_view state = g["baseline_state"];
      EXPECT_TRUE(state == "new" || state == "unchanged" || state == "worse" || state == "better") << state;
      if (std::string_view(g["id"]) == "dataloader_stall") stall_new = state == "new";
      if (std::string_view(g["id"]) == "fp32_no_tensor_cores" && std::string_view(g["origin"]) == "aten::cudnn_convolution") {
        EXPECT_EQ(state, "unchanged") << "the same FP32 convolutions in both runs";
      }
    }
    EXPECT_TRUE(stall_new) << json.out.substr(0, 2000);
    EXPECT_GE(uint64_t(doc["summary"]["baseline"]["new"]), 1u);
  }
  const ProcResult text = analyze({"--baseline", nw4_report(), kNw0});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.out.find("dataloader_stall: GPU starved by the input pipeline  [new]"), std::string::npos) << text.out;
  const std::regex counts(R"(against the baseline \S+: 1 new, 0 worse, \d+ better, \d+ unchanged, \d+ fixed)");
  EXPECT_TRUE(std::regex_search(text.out, counts)) << text.out;
  const ProcResult md = analyze({"--format", "md", "--baseline", nw4_report(), kNw0});
  EXPECT_EQ(md.exit_code, 1);
  EXPECT_NE(md.out.find("| **new** |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find(": **1 new, 0 worse, "), std::string::npos) << md.out;
  const ProcResult junit = analyze({"--format", "junit", "--baseline", nw4_report(), kNw0});
  EXPECT_EQ(junit.exit_code, 1);
  EXPECT_NE(junit.out.find("<failure type=\"new or worse\" message=\"1 new, 0 worse, "), std::string::npos) << junit.out;
  EXPECT_NE(junit.out.find("against the baseline: dataloader_stall\""), std::string::npos) << junit.out;
  const ProcResult sarif = analyze({"--format", "sarif", "--baseline", nw4_report(), kNw0});
  EXPECT_EQ(sarif.exit_code, 1);
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(sarif.out).get(doc), simdjson::SUCCESS);
  std::map<std::string, std::string> state_of;
  for (auto res : doc["runs"].at(0)["results"].get_array()) {
    const std::string_view state = res["baselineState"];
    EXPECT_TRUE(state == "new" || state == "unchanged" || state == "updated" || state == "absent") << state;
    state_of[std::string(std::string_view(res["ruleId"])) + "|" + std::string(std::string_view(res["properties"]["origin"]))] = state;
  }
  EXPECT_EQ(state_of["dataloader_stall|enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"], "new");
  // What nw4 no longer has of nw0's findings (the DataLoader stall) are SARIF's "absent"
  // results, one per fixed finding.
  const std::string nw0_json = scratch() + "/nw0_baseline.json";
  ASSERT_EQ(analyze({"--format", "json", "--fail-on", "none", "-o", nw0_json, kNw0}).exit_code, 0);
  simdjson::dom::parser bp;
  simdjson::dom::element back;
  ASSERT_EQ(bp.parse(analyze({"--format", "sarif", "--baseline", nw0_json, kNw4}).out).get(back), simdjson::SUCCESS);
  std::map<std::string, std::string> back_state_of;
  for (auto res : back["runs"].at(0)["results"].get_array())
    back_state_of[std::string(std::string_view(res["ruleId"])) + "|" + std::string(std::string_view(res["properties"]["origin"]))] =
        std::string_view(res["baselineState"]);
  const ProcResult json = analyze({"--format", "json", "--baseline", nw0_json, kNw4});
  simdjson::dom::parser jp;
  simdjson::dom::element jd;
  ASSERT_EQ(jp.parse(json.out).get(jd), simdjson::SUCCESS);
  size_t fixed = 0;
  for (auto g : jd["traces"].at(0)["baseline"]["fixed_findings"].get_array()) {
    ++fixed;
    EXPECT_EQ(back_state_of[std::string(std::string_view(g["id"])) + "|" + std::string(std::string_view(g["origin"]))], "absent");
  }
  EXPECT_GT(fixed, 0u) << "nw0 has the DataLoader stall nw4 does not";
  EXPECT_EQ(fixed, uint64_t(jd["summary"]["baseline"]["fixed"]));
}

// The README's example: nw0 against nw4's report. nw4's two windows that hold only the
// head's FP32 matmuls (aten::mm) are part of its one FP32 finding, named after
// aten::cudnn_convolution as nw0's is (audit7b; they were a second group at aten::mm):
// unchanged, not fixed. nw0's pageable
// copies cost ~2.17 ms a step against nw4's ~9.5 ms: better, and in SARIF "updated" with
// the property baseline "better" (worse is "updated" too).
TEST(Baseline, Nw0AgainstNw4SaysBetterAndFixesNothingItStillHas) {
  const ProcResult text = analyze({"--baseline", nw4_report(), kNw0});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.out.find(": 1 new, 0 worse, 0 better, 1 unchanged, 0 fixed; still here below this report's findings: "),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("    fixed "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("fp32_no_tensor_cores: Tensor-core eligible math in FP32  [unchanged]"), std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("fp32_no_tensor_cores at aten::mm"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("    better pageable_memcpy at aten::copy_: Copies from pageable host memory, still here below this "
                          "report's findings: ~2.17 ms per step (1.2% of step time) (was ~9.5 ms per step (6.8% of step time))"),
            std::string::npos)
      << text.out;
  const ProcResult sarif = analyze({"--format", "sarif", "--baseline", nw4_report(), kNw0});
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(sarif.out).get(doc), simdjson::SUCCESS);
  bool copies = false;
  for (auto res : doc["runs"].at(0)["results"].get_array())
    if (std::string_view(res["ruleId"]) == "pageable_memcpy") {
      copies = true;
      EXPECT_EQ(std::string_view(res["baselineState"]), "updated");
      EXPECT_EQ(std::string_view(res["properties"]["baseline"]), "better");
      EXPECT_EQ(std::string_view(res["level"]), "note") << "still here below the findings: not gated";
    }
  EXPECT_TRUE(copies) << sarif.out.substr(0, 1500);
}

// A report with better findings reads back: as a baseline, and its states as written.
TEST(Baseline, ABetterStateRoundTripsThroughJson) {
  const ProcResult json = analyze({"--format", "json", "--baseline", nw4_report(), kNw0});
  ASSERT_EQ(json.exit_code, 1) << json.err;
  ASSERT_NE(json.out.find(R"("baseline_state":"better")"), std::string::npos);
  const std::vector<TraceReport> read = read_baseline_report("nw0_vs_nw4.json", json.out);
  ASSERT_EQ(read.size(), 1u);
  size_t better = 0;
  for (const GroupedFinding& g : read[0].still_present) better += g.baseline == BaselineState::better;
  EXPECT_EQ(better, 2u) << "gpu_idle and pageable_memcpy";
  simdjson::dom::parser p;
  EXPECT_EQ(uint64_t(p.parse(json.out)["summary"]["baseline"]["better"]), 0u) << "no listed finding is better";
  EXPECT_EQ(analyze({"--baseline", write_file("nw0_vs_nw4.json", json.out), kNw0}).exit_code, 0) << "nw0 against its own report";
}

TEST(Baseline, ATraceAgainstItsOwnReportPassesInEveryFormat) {
  for (const std::string format : {"text", "json", "md", "sarif", "junit"}) {
    const ProcResult r = analyze({"--format", format, "--baseline", nw4_report(), kNw4});
    EXPECT_EQ(r.exit_code, 0) << format << "\n" << r.out.substr(0, 1500) << r.err;
    if (format == std::string("text")) {
      EXPECT_NE(r.out.find(": 0 new, 0 worse, "), std::string::npos) << r.out;
    }
    if (format == std::string("junit")) {
      EXPECT_EQ(r.out.find("<failure"), std::string::npos) << r.out;
    }
  }
  // A report another JSON tool rewrote (spaces around the schema) is still a report.
  std::string spaced = read_file(nw4_report());
  ASSERT_EQ(spaced.rfind(R"({"schema":"ttap.analyze/2")", 0), 0u);
  spaced.replace(0, 26, "{\n  \"schema\" : \"ttap.analyze/2\"");
  EXPECT_EQ(analyze({"--baseline", write_file("nw4_spaced.json", spaced), kNw4}).exit_code, 0);
  // The same traces without the baseline fail the default gate: the baseline is what passes them.
  EXPECT_EQ(analyze({kNw4}).exit_code, 1);
}

// A baseline report made with other window settings flagged other windows (an older ttap
// flagged the plain top 5): the run says so, since findings may come and go for that alone.
TEST(Baseline, ABaselineMadeWithOtherWindowSettingsIsWarnedAbout) {
  const std::string plain = scratch() + "/nw4_plain_top_k.json";
  ASSERT_EQ(analyze({"--format", "json", "--fail-on", "none", "--flag-spacing", "0", "-o", plain, kNw4}).exit_code, 0);
  const auto warnings_of = [](const ProcResult& r) {
    std::string all;
    simdjson::dom::parser p;
    for (auto w : p.parse(r.out)["warnings"].get_array()) all += std::string(std::string_view(w)) + "\n";
    return all;
  };
  const ProcResult other = analyze({"--format", "json", "--fail-on", "none", "--baseline", plain, kNw4});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(warnings_of(other).find("top-k 5, flag spacing 0, scorer rules; this run uses 100, 5, 5, rules"), std::string::npos)
      << warnings_of(other);
  const ProcResult same = analyze({"--format", "json", "--fail-on", "none", "--baseline", nw4_report(), kNw4});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(warnings_of(same).find("flag spacing"), std::string::npos) << warnings_of(same);
}

TEST(Baseline, WorseWhenTheCostPerStepRoseMoreThanRegress) {
  // nw0's own report with the stall's cost per step halved: nw0 is then twice as bad.
  const std::string own = scratch() + "/nw0_own.json";
  ASSERT_EQ(analyze({"--format", "json", "--fail-on", "none", "-o", own, kNw0}).exit_code, 0);
  std::string text = read_file(own);
  const size_t group = text.find(R"("findings":[{"id":"dataloader_stall")");
  ASSERT_NE(group, std::string::npos) << "the stall ranks first";
  const std::string key = R"("cost_per_step_ns":)";
  const size_t at = text.find(key, group) + key.size();
  const size_t digits = text.find_first_not_of("0123456789", at);
  ASSERT_GT(digits, at);
  text.replace(at, digits - at, std::to_string(std::stoll(text.substr(at, digits - at)) / 2));
  const std::string halved = write_file("nw0_halved.json", text);
  EXPECT_EQ(analyze({"--baseline", own, kNw0}).exit_code, 0) << "against itself: nothing new or worse";
  const ProcResult worse = analyze({"--baseline", halved, kNw0});
  EXPECT_EQ(worse.exit_code, 1);
  EXPECT_NE(worse.out.find("dataloader_stall: GPU starved by the input pipeline  [worse]"), std::string::npos) << worse.out;
  EXPECT_NE(worse.out.find(": 0 new, 1 worse, "), std::string::npos) << worse.out;
  EXPECT_EQ(analyze({"--baseline", halved, "--regress", "150", kNw0}).exit_code, 0) << "+100% is within --regress 150";
  const ProcResult sarif = analyze({"--format", "sarif", "--baseline", halved, kNw0});
  EXPECT_NE(sarif.out.find("\"baselineState\":\"updated\""), std::string::npos);
}

TEST(Baseline, BadBaselinesAreExitTwoBeforeAnyWork) {
  const ProcResult missing = analyze({"--baseline", scratch() + "/no_such_report.json", kNw0});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no_such_report.json"), std::string::npos) << missing.err;
  const std::string v1 = write_file("v1_report.json", R"({"schema": "ttap.analyze/1", "traces": []})");
  const ProcResult old = analyze({"--baseline", v1, kNw0});
  EXPECT_EQ(old.exit_code, 2);
  EXPECT_NE(old.err.find("ttap.analyze/1"), std::string::npos) << old.err;
  const std::string broken = write_file("broken_report.json", R"({"schema":"ttap.analyze/2","traces":[{"path":"x","findings":[{"id":)");
  EXPECT_EQ(analyze({"--baseline", broken, kNw0}).exit_code, 2);
  const std::string not_trace = write_file("not_a_trace.json", R"({"hello": 1})");
  const ProcResult nt = analyze({"--baseline", not_trace, kNw0});
  EXPECT_EQ(nt.exit_code, 2);
  EXPECT_NE(nt.err.find("baseline"), std::string::npos) << nt.err;
  // A baseline without a matching trace leaves that trace gated as without one, and says so.
  const std::string two = scratch() + "/two.json";
  analyze({"--format", "json", "--fail-on", "none", "-o", two, kNw4, data_path("hta_cpu_only.json.gz")});
  const ProcResult unmatched = analyze({"--baseline", two, kNw0});
  EXPECT_EQ(unmatched.exit_code, 1);
  EXPECT_NE(unmatched.out.find("no trace in the baseline"), std::string::npos) << unmatched.out;
}

// The README's CI recipe: the main-branch job keeps its ttap.json; a pull request's job
// gates against it. Run with the script both YAML jobs call.
TEST(Baseline, TheCiRecipeRunsEndToEnd) {
  const std::string gate = std::string(TTAP_SOURCE_DIR) + "/scripts/ci/ttap-gate.sh";
  ASSERT_TRUE(fs::exists(gate));
  const std::string root = scratch() + "/ci";
  fs::create_directories(root);
  // Each job profiles to the same trace path, as the recipe's train.py writes it.
  const std::string trace = root + "/trace.json.gz";
  const std::vector<std::string> env{"TTAP=" + std::string(TTAP_BINARY)};
  auto job = [&](const std::string& profiled, const std::string& baseline, const std::string& out) {
    fs::copy_file(profiled, trace, fs::copy_options::overwrite_existing);
    return run_process({"/bin/sh", gate, trace, baseline, out, "--scorer", "rules"}, env);
  };
  // main, num_workers=4, no baseline yet: the gate sees every finding (nw4 has errors).
  const ProcResult first = job(kNw4, root + "/none.json", root + "/main1");
  EXPECT_EQ(first.exit_code, 1) << first.err;
  EXPECT_NE(first.err.find("no baseline at"), std::string::npos) << first.err;
  for (const char* f : {"ttap.json", "ttap.sarif", "ttap.md", "ttap.junit.xml"})
    EXPECT_TRUE(fs::exists(root + "/main1/" + f)) << f;
  const std::string kept = root + "/main1/ttap.json";  // the cache / artifact the next job restores
  // A pull request that changes nothing passes against main's report.
  const ProcResult same = job(kNw4, kept, root + "/pr_same");
  EXPECT_EQ(same.exit_code, 0) << same.err << read_file(root + "/pr_same/ttap.md");
  EXPECT_NE(read_file(root + "/pr_same/ttap.md").find(": **0 new, 0 worse, "), std::string::npos);
  // A pull request that sets num_workers=0 fails, with dataloader_stall as new.
  const ProcResult pr = job(kNw0, kept, root + "/pr_nw0");
  EXPECT_EQ(pr.exit_code, 1) << pr.err;
  const std::string sarif = read_file(root + "/pr_nw0/ttap.sarif");
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(sarif).get(doc), simdjson::SUCCESS);
  bool stall_new = false;
  for (auto res : doc["runs"].at(0)["results"].get_array())
    if (std::string_view(res["ruleId"]) == "dataloader_stall") stall_new = std::string_view(res["baselineState"]) == "new";
  EXPECT_TRUE(stall_new) << sarif.substr(0, 1500);
  EXPECT_NE(read_file(root + "/pr_nw0/ttap.junit.xml").find("against the baseline: dataloader_stall"), std::string::npos);
  EXPECT_NE(read_file(root + "/pr_nw0/ttap.md").find("| **new** |"), std::string::npos);
  // A bad trace is exit 2 through the script too.
  const std::string bad = write_file("ci_bad.json", "{\"traceEvents\": [");
  EXPECT_EQ(job(bad, kept, root + "/pr_bad").exit_code, 2);
}

}  // namespace
