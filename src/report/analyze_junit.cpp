// JUnit XML, which every CI system can display: one testcase per trace, its grouped
// findings in the body. A flagged trace (a finding of severity warning or above, or the
// score at --fail-score) is a failure; against a baseline, only a trace with a new or worse
// finding of severity warning or above. One that could not be analyzed is an error; the
// exit code is the gate's (--fail-on) business.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "analyze_common.hpp"

namespace ttap {

using namespace analyze_render;

std::string render_analyze_junit(const Report& report) {
  const Counts c = count(report);
  double seconds = 0;
  for (const auto& t : report.traces) seconds += t.seconds;
  std::string cases;
  size_t failures = 0;
  for (const TraceReport& t : report.traces) {
    cases += fmt::format("    <testcase classname=\"ttap.analyze\" name=\"{}\" time=\"{:.3f}\"", xml_escape(t.path), t.seconds);
    if (t.verdict == Verdict::error) {
      cases += fmt::format(">\n      <error type=\"{}\" message=\"{}\"/>\n    </testcase>\n", t.internal_error ? "internal" : "input",
                           xml_escape(t.error));
      continue;
    }
    std::string body;
    for (const GroupedFinding& g : t.findings) {
      const std::string_view state = baseline_state_name(g.baseline);
      body += fmt::format("[{}] {}: {}{}{}\n", severity_name(g.severity), g.id, g.name, g.origin.empty() ? "" : " in " + g.origin,
                          state.empty() ? "" : fmt::format(" ({})", state));
      body += fmt::format("  {}; costs {}\n", occurrences_text(g), group_cost_text(g));
      for (const auto& l : g.locations) body += fmt::format("  at {}\n", location_text(l));
      for (const auto& e : g.evidence) body += fmt::format("  - {}\n", e);
      if (g.saving) body += fmt::format("  what-if: {}\n", saving_text(*g.saving));
      if (!g.fix.empty()) body += fmt::format("  fix: {}\n", g.fix);
    }
    if (!t.baseline.empty()) body += fmt::format("against the baseline {}: {}\n", t.baseline, baseline_counts_text(t));
    // Against a baseline only what is new or worse fails; without one, a flagged trace.
    std::vector<std::string> failing;
    for (const GroupedFinding& g : t.findings)
      if ((t.baseline.empty() || is_new_or_worse(g)) && g.severity >= Severity::warning &&
          std::find(failing.begin(), failing.end(), g.id) == failing.end())
        failing.push_back(g.id);
    const bool fails = t.baseline.empty() ? t.verdict == Verdict::flagged : !failing.empty();
    if (!fails) {
      cases += body.empty() ? "/>\n" : fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml_escape(body));
      continue;
    }
    ++failures;
    std::string message = t.baseline.empty() ? fmt::format("{} finding(s), score {:.2f}", finding_count(t), t.score)
                                              : fmt::format("{} against the baseline", baseline_counts_text(t));
    if (!failing.empty()) message += ": " + fmt::format("{}", fmt::join(failing, ", "));
    cases += fmt::format(">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                         t.baseline.empty() ? "flagged" : "new or worse", xml_escape(message), xml_escape(body));
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"ttap analyze\" tests=\"{0}\" failures=\"{1}\" errors=\"{2}\" time=\"{3:.3f}\">\n"
      "  <testsuite name=\"ttap analyze\" tests=\"{0}\" failures=\"{1}\" errors=\"{2}\" skipped=\"0\" time=\"{3:.3f}\">\n"
      "{4}"
      "  </testsuite>\n"
      "</testsuites>\n",
      report.traces.size(), failures, c.errors, seconds, cases);
}

}  // namespace ttap
