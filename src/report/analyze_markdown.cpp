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
  if (!t.scorer.empty()) out += fmt::format("Trace score **{:.2f}** ({}{}), {} windows.\n\n", t.score, t.scorer,
                                            t.device.empty() ? "" : " on " + t.device, t.windows.size());
  for (const std::string& line : headline_lines(t)) out += fmt::format("- {}\n", line);
  out += "\n";
  if (!t.flagged.empty()) {
    out += "| where | time | score | severity | id | cost | what-if saving | code | fix |\n";
    out += "|---:|---|---:|---|---|---:|---|---|---|\n";
    for (const FlaggedWindow& w : t.flagged)
      for (const Finding& f : w.findings) {
        std::vector<std::string> locs;
        for (const auto& l : f.locations) locs.push_back("`" + cell(location_text(l)) + "`");
        out += fmt::format("| {} | {} .. {} | {:.2f} | {} | `{}` | {} | {} | {} | {} |\n",
                           flagged_label(w), offset_ms(t, w.begin),
                           offset_ms(t, w.end), w.score, severity_label(f.severity), f.id, f.cost > 0 ? ms(f.cost) : "",
                           f.saving ? saving_text(*f.saving) : "", fmt::join(locs, "<br>"), cell(f.fix));
      }
    out += "\n";
    for (const FlaggedWindow& w : t.flagged)
      for (const Finding& f : w.findings) {
        if (f.evidence.empty() && f.explanation.empty()) continue;
        out += fmt::format("<details><summary>{}: {} evidence</summary>\n\n", flagged_label(w), f.id);
        for (const auto& e : f.evidence) out += fmt::format("- {}\n", cell(e));
        if (!f.explanation.empty()) out += fmt::format("- LLM: {}\n", cell(f.explanation));
        out += "\n</details>\n\n";
      }
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
