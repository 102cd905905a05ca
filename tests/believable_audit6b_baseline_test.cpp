// Findings a user can believe (issue 12, item 0), left by the twelfth audit: `--baseline`
// called a baseline finding "fixed" whenever the new report did not list it.
// `ttap analyze h200_twin/resnet50_h200_nw0.json.gz --baseline h200_twin/resnet50_h200_nw4.json.gz`
// read "fixed pageable_memcpy at aten::copy_", yet nw0 makes the same pageable HtoD copy
// every step (its headline gives them a 1.33 ms what-if): nw0's report lists the DataLoader
// stall and launch_bound only, the copies lie in no flagged window and cost too little of
// nw0's longer steps to list. A baseline finding is fixed only when the new run no longer has
// it anywhere; one still there below the report is unchanged, worse or better, and lists as such.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <string>

#include "rules_support.hpp"
#include "suite_support.hpp"

namespace {

using namespace ttap;

const std::string kNw0 = ttap::suite::data_path("h200_twin/resnet50_h200_nw0.json.gz");
const std::string kNw4 = ttap::suite::data_path("h200_twin/resnet50_h200_nw4.json.gz");

// The steady state's copies from pageable host memory to the device, from the trace.
size_t pageable_htod_copies(const rules_support::Loaded& l) {
  size_t n = 0;
  for (EventId e = 0; e < l.trace.size(); ++e)
    if (l.trace.category[e] == Category::GpuMemcpy && l.trace.name_of(e).find("HtoD (Pageable") != std::string_view::npos &&
        l.trace.ts[e] >= l.begin && l.trace.ts[e] < l.end)
      ++n;
  return n;
}

TEST(BelievableAudit6bBaseline, ACopyStillMadeIsNotFixed) {
  const rules_support::Loaded& nw0 = rules_support::load(kNw0);
  const rules_support::Loaded& nw4 = rules_support::load(kNw4);
  // Both runs copy their batches from pageable memory, one copy a step.
  EXPECT_GE(pageable_htod_copies(nw0), 6u);
  EXPECT_EQ(pageable_htod_copies(nw0), pageable_htod_copies(nw4));

  TraceReport base = rules_support::analyze_default_windows(nw4);
  TraceReport now = rules_support::analyze_default_windows(nw0);
  ASSERT_TRUE(std::any_of(base.findings.begin(), base.findings.end(), [](const GroupedFinding& g) { return g.id == "pageable_memcpy"; }));
  ASSERT_FALSE(std::any_of(now.findings.begin(), now.findings.end(), [](const GroupedFinding& g) { return g.id == "pageable_memcpy"; }))
      << "nw0's report does not list the copies: what the baseline must still see";
  compare_with_baseline(now, base, 10.0);
  for (const GroupedFinding& g : now.fixed) EXPECT_NE(g.id, "pageable_memcpy") << "nw0 still makes the copies";
  const auto kept = std::find_if(now.still_present.begin(), now.still_present.end(),
                                 [](const GroupedFinding& g) { return g.id == "pageable_memcpy"; });
  ASSERT_NE(kept, now.still_present.end());
  EXPECT_EQ(kept->origin, "aten::copy_");
  EXPECT_EQ(kept->baseline, BaselineState::better) << "a quarter less a step than in nw4";
  ASSERT_TRUE(kept->cost_per_step && kept->baseline_cost_per_step);
  EXPECT_GT(*kept->cost_per_step, 0);
  EXPECT_LE(*kept->cost_per_step, *kept->baseline_cost_per_step);
  // Still present is not a reported finding: nothing about it fails the gate.
  apply_gate(now, FailOn::warning, std::nullopt);
  EXPECT_TRUE(now.gate_failed) << "the DataLoader stall is new";
  now.findings.erase(std::remove_if(now.findings.begin(), now.findings.end(),
                                    [](const GroupedFinding& g) { return g.baseline == BaselineState::added; }),
                     now.findings.end());
  now.flagged.clear();
  apply_gate(now, FailOn::warning, std::nullopt);
  EXPECT_FALSE(now.gate_failed);

  // What nw0 really no longer has stays fixed: nw4 against nw0, the DataLoader stall.
  TraceReport back = rules_support::analyze_default_windows(nw4);
  compare_with_baseline(back, rules_support::analyze_default_windows(nw0), 10.0);
  EXPECT_TRUE(std::any_of(back.fixed.begin(), back.fixed.end(), [](const GroupedFinding& g) { return g.id == "dataloader_stall"; }));
}

// The command the audit ran, in text and JSON: the copies read better, not fixed.
TEST(BelievableAudit6bBaseline, TheReportsSayStillHere) {
  const ttap::suite::ProcResult text = ttap::suite::analyze({"--baseline", kNw4, kNw0});
  EXPECT_EQ(text.exit_code, 1) << text.err;
  EXPECT_EQ(text.out.find("fixed pageable_memcpy"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("better pageable_memcpy at aten::copy_: Copies from pageable host memory, still here below this "
                          "report's findings: ~"),
            std::string::npos)
      << text.out;
  const ttap::suite::ProcResult json = ttap::suite::analyze({"--format", "json", "--baseline", kNw4, kNw0});
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(json.out).get(doc), simdjson::SUCCESS);
  const auto b = doc["traces"].at(0)["baseline"];
  for (auto g : b["fixed_findings"].get_array()) EXPECT_NE(std::string_view(g["id"]), "pageable_memcpy");
  bool kept = false;
  for (auto g : b["still_present_findings"].get_array())
    if (std::string_view(g["id"]) == "pageable_memcpy") kept = std::string_view(g["baseline_state"]) == "better";
  EXPECT_TRUE(kept) << json.out.substr(0, 3000);
  EXPECT_EQ(uint64_t(b["still_present"]), uint64_t(doc["summary"]["baseline"]["still_present"]));
}

}  // namespace
