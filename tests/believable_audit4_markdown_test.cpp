// Findings a user can believe (issue 12, item 0), audit of the tenth round: the Markdown
// report (a pull-request comment, a job summary) ranks the grouped findings in a table and
// puts each one's evidence in a collapsed box under it. The boxes were titled by the id alone,
// and an id often has several groups: tracelens_xdit_flux1_capture's default report has three
// boxes titled "gpu_idle: evidence" and two "launch_bound: evidence", so a reader could not
// tell which evidence is which row's. Each box now carries its row's rank and origin
// ("3. gpu_idle in <code>diffusers/hooks/hooks.py(268): _set_context</code>: evidence").
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "rules_support.hpp"
#include "suite_support.hpp"
#include "ttap/report.hpp"

namespace {

using namespace ttap;

TEST(BelievableAudit4Markdown, EachEvidenceBoxNamesItsRow) {
  Report report;
  report.traces.push_back(rules_support::analyze_all_windows(rules_support::load(suite::data_path("tracelens_xdit_flux1_capture.json.gz"))));
  const TraceReport& t = report.traces.front();
  size_t idle_groups = 0;
  for (const GroupedFinding& g : t.findings) idle_groups += g.id == "gpu_idle";
  ASSERT_GE(idle_groups, 2u);  // the case: one id, several problems

  const std::string md = render_analyze_markdown(report);
  std::set<std::string> titles;
  size_t boxes = 0;
  for (size_t p = md.find("<summary>"); p != std::string::npos; p = md.find("<summary>", p + 1)) {
    const size_t e = md.find("</summary>", p);
    ASSERT_NE(e, std::string::npos);
    titles.insert(md.substr(p + 9, e - p - 9));
    ++boxes;
  }
  EXPECT_GE(boxes, idle_groups);
  EXPECT_EQ(titles.size(), boxes) << md;  // no two boxes read alike
  // Each box is titled as its row of the table: rank, id, origin.
  for (size_t i = 0; i < t.findings.size(); ++i) {
    const GroupedFinding& g = t.findings[i];
    if (g.evidence.empty()) continue;
    std::string title = std::to_string(i + 1) + ". " + g.id;
    if (!g.origin.empty()) title += " in <code>" + g.origin + "</code>";  // no character here needs escaping
    EXPECT_TRUE(titles.count(title + ": evidence")) << title << "\n" << md;
  }
}

}  // namespace
