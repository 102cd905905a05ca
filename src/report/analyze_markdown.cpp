// Markdown: for a pull-request comment or a job summary ($GITHUB_STEP_SUMMARY).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analyze_common.hpp"

namespace ttap {

namespace {

using namespace analyze_render;

// A table cell: pipes and newlines would break the row.
std::string cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

void render_trace(std::string& out, const TraceReport& t) {
  out += fmt::format("## `{}`: {}\n\n", t.path, verdict_name(t.verdict));
  if (t.verdict == Verdict::error) {
    out += fmt::format("Could not analyze: {}\n\n", t.error);
    return;
  }
  if (!t.scorer.empty())
    out += fmt::format("Trace score **{:.2f}** ({}{}), {}.\n\n", t.score, t.scorer, t.device.empty() ? "" : " on " + t.device,
                       count_text(t.windows.size(), "window"));
  for (const std::string& line : headline_lines(t)) out += fmt::format("- {}\n", line);
  out += "\n";
  if (!t.baseline.empty()) out += fmt::format("Against the baseline `{}`: **{}**.\n\n", cell(t.baseline), baseline_counts_text(t));
  if (!t.findings.empty()) {
    const bool vs = !t.baseline.empty();
    out += fmt::format("| # | severity | id | in | occurrences | cost | what-if saving | code | fix |{}\n", vs ? " baseline |" : "");
    out += fmt::format("|---:|---|---|---|---|---|---|---|---|{}\n", vs ? "---|" : "");
    for (size_t i = 0; i < t.findings.size(); ++i) {
      const GroupedFinding& g = t.findings[i];
      std::vector<std::string> locs;
      for (const auto& l : g.locations) locs.push_back("`" + cell(location_text(l)) + "`");
      out += fmt::format("| {} | {} | `{}` | {} | {} | {} | {} | {} | {} |{}\n", i + 1, severity_name(g.severity), g.id,
                         g.origin.empty() ? "" : "`" + cell(g.origin) + "`", occurrences_text(g), group_cost_text(g),
                         g.saving ? saving_text(*g.saving) : "", fmt::join(locs, "<br>"), cell(g.fix),
                         vs ? fmt::format(" {} |", is_new_or_worse(g) ? fmt::format("**{}**", baseline_state_name(g.baseline))
                                                                       : std::string(baseline_state_name(g.baseline)))
                            : "");
    }
    out += fmt::format("\n{}\n\n", recoverable_text(t));
    for (size_t i = 0; i < t.findings.size(); ++i) {
      const GroupedFinding& g = t.findings[i];
      if (g.evidence.empty() && g.explanation.empty()) continue;
      const auto ranges = occurrence_ranges(t, g);
      // Named as its row is (rank, id, origin): an id can have several groups, and
      // xdit_flux1_capture's three boxes all read "gpu_idle: evidence".
      out += fmt::format("<details><summary>{}. {}{}: evidence</summary>\n\n", i + 1, g.id,
                         g.origin.empty() ? "" : " in <code>" + xml_escape(g.origin) + "</code>");
      if (!ranges.empty()) out += fmt::format("- first occurrences: {}\n", fmt::join(ranges, ", "));
      for (const auto& e : g.evidence) out += fmt::format("- {}\n", cell(e));
      if (!g.explanation.empty()) out += fmt::format("- LLM: {}\n", cell(g.explanation));
      out += "\n</details>\n\n";
    }
  }
  if (!t.still_present.empty()) {
    out += "Still here from the baseline, below this report's findings:\n\n";
    for (const GroupedFinding& g : t.still_present)
      out += fmt::format("- {} `{}`{}: {}: {} (was {})\n",
                         is_new_or_worse(g) ? "**worse**" : std::string(baseline_state_name(g.baseline)), g.id,
                         g.origin.empty() ? "" : " in `" + cell(g.origin) + "`", g.name, group_cost_text(g), baseline_cost_text(g));
    out += "\n";
  }
  if (!t.fixed.empty()) {
    out += "Fixed since the baseline:\n\n";
    for (const GroupedFinding& g : t.fixed)
      out += fmt::format("- `{}`{}: {} (was {})\n", g.id, g.origin.empty() ? "" : " in `" + cell(g.origin) + "`", g.name, group_cost_text(g));
    out += "\n";
  }
  if (t.suppressed > 0) out += fmt::format("{} finding(s) suppressed by the config's ignores.\n\n", t.suppressed);
  for (const auto& w : t.warnings) out += fmt::format("> warning: {}\n\n", w);
}

}  // namespace

std::string render_analyze_markdown(const Report& report) {
  std::string out = "# ttap analyze\n\n";
  if (report.traces.size() > 1) {
    const Counts c = count(report);
    out += fmt::format("{} traces: {} flagged, {} clean, {} failed to analyze.\n\n", report.traces.size(), c.flagged, c.clean, c.errors);
    out += "| trace | verdict | score | findings | ids |\n|---|---|---:|---:|---|\n";
    for (const auto& t : report.traces)
      out += fmt::format("| `{}` | {} | {} | {} | {} |\n", cell(t.path), verdict_name(t.verdict),
                         t.verdict == Verdict::error || t.scorer.empty() ? "" : fmt::format("{:.2f}", t.score),
                         t.verdict == Verdict::error ? "" : fmt::format("{}", finding_count(t)),
                         t.verdict == Verdict::error ? cell(t.error) : fmt::format("{}", fmt::join(finding_ids(t), ", ")));
    out += "\n";
  }
  for (const auto& w : report.warnings) out += fmt::format("> warning: {}\n\n", w);
  for (const TraceReport& t : report.traces) render_trace(out, t);
  return out;
}

}  // namespace ttap
