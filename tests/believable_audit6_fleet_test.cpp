// Findings a user can believe (issue 12, item 0), audit of the twelfth round: `ttap merge`'s
// fleet view disagreed with the reports it merges.
// - "top finding" was the id with the largest what-if: h200_twin's nw4 report leads with
//   launch_bound (an error, 16.8 ms a step, no what-if), the fleet named pageable_memcpy (its
//   third, a warning whose what-if saves 2.18 ms a step).
// - "cost (sum)" added the flagged windows' slices: nw0's DataLoader stall, which its report
//   costs at ~40.4 ms a step over 6 steps (242 ms), read 22.3 ms (five windows of 4.46 ms),
//   and nw0's launch_bound, seen across the steady state but in no flagged window, added
//   nothing.
// - an id without a what-if read "0 ns" saved, "0.000" of the step: no estimate, not a zero.
// The fleet now takes each trace's grouped findings as its report gives them.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"
#include "ttap/fleet.hpp"

namespace {

using namespace ttap;

TEST(BelievableAudit6Fleet, TheFleetSaysWhatEachReportSays) {
  Report report;
  for (const char* trace : {"h200_twin/resnet50_h200_nw0.json.gz", "h200_twin/resnet50_h200_nw4.json.gz"}) {
    TraceReport t = rules_support::analyze_default_windows(rules_support::load(test::data(trace)));
    t.path = trace;
    report.traces.push_back(std::move(t));
  }
  const FleetSummary fleet = summarize_fleet(report, 0);

  // Each trace's top finding is the one its report names first.
  ASSERT_EQ(fleet.worst.size(), 2u);
  for (const FleetTrace& w : fleet.worst)
    for (const TraceReport& t : report.traces)
      if (t.path == w.path) {
        ASSERT_FALSE(t.findings.empty());
        EXPECT_EQ(w.top_id, t.findings.front().id) << w.path;
      }
  // On nw4 that is not the id with the largest what-if.
  const TraceReport& nw4 = report.traces[1];
  ASSERT_FALSE(nw4.savings.empty());
  const std::string largest_saving = nw4.savings.front().id;  // largest first
  EXPECT_NE(nw4.findings.front().id, largest_saving);

  // Costs and severities summed from the grouped findings.
  std::map<std::string, int64_t> cost;
  std::map<std::string, Severity> worst;
  for (const TraceReport& t : report.traces)
    for (const GroupedFinding& g : t.findings) {
      cost[g.id] += g.cost;
      worst[g.id] = std::max(worst.count(g.id) ? worst[g.id] : Severity::info, g.severity);
    }
  ASSERT_EQ(fleet.findings.size(), cost.size());
  for (const FleetFinding& f : fleet.findings) {
    EXPECT_EQ(f.cost, cost[f.id]) << f.id;
    EXPECT_EQ(f.worst, worst[f.id]) << f.id;
    EXPECT_FALSE(f.name.empty()) << f.id;
  }

  // An id no report gives a what-if renders no saving, not 0.
  const std::string text = render_fleet_text(fleet);
  for (const FleetFinding& f : fleet.findings)
    if (f.traces_with_saving == 0) {
      const size_t row = text.find("\n" + f.id + " ");
      ASSERT_NE(row, std::string::npos) << text;
      const std::string line = text.substr(row + 1, text.find('\n', row + 1) - row - 1);
      EXPECT_EQ(line.find("0 ns"), std::string::npos) << line;
      EXPECT_NE(line.find(" - "), std::string::npos) << line;
    }
}

}  // namespace
