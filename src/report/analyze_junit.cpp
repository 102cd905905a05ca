// JUnit XML, which every CI system can display: one testcase per trace, its grouped
// findings in the body. A testcase fails when its trace fails the gate, as the exit code
// says (--fail-on: a finding at or above it, against a baseline only a new or worse one;
// --fail-score; --fail-savings): with --fail-on none a flagged trace is no failure, and one
// whose recoverable share reaches --fail-savings is one. One that could not be analyzed is
// an error.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string_view>

#include "analyze_common.hpp"

namespace ttap {

using namespace analyze_render;

namespace {

// Whether a finding of this severity fails the gate --fail-on names (none, warning, error).
bool fails_on(std::string_view fail_on, Severity s) {
  if (fail_on == "error") return s >= Severity::error;
  if (fail_on == "warning") return s >= Severity::warning;
  return false;
}

}  // namespace

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
    // The ids that fail the gate: at or above --fail-on; against a baseline, new or worse.
    // Neither an id only the LLM names nor one-time capture work is gated on (gate.cpp).
    std::vector<std::string> failing;
    for (const GroupedFinding& g : t.findings)
      if (fails_on(report.settings.fail_on, g.severity) && g.source != "llm" && !g.one_time &&
          (t.baseline.empty() || is_new_or_worse(g)) && std::find(failing.begin(), failing.end(), g.id) == failing.end())
        failing.push_back(g.id);
    if (!t.gate_failed) {
      cases += body.empty() ? "/>\n" : fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml_escape(body));
      continue;
    }
    ++failures;
    std::string message = t.baseline.empty() ? fmt::format("{} finding(s), score {:.2f}", finding_count(t), t.score)
                                              : fmt::format("{} against the baseline", baseline_counts_text(t));
    if (!failing.empty()) message += ": " + fmt::format("{}", fmt::join(failing, ", "));
    // The other gates, when they are what failed it.
    const ReportSettings& gate = report.settings;
    const bool score_high = gate.fail_score && t.score >= *gate.fail_score;
    if (score_high) message += fmt::format("; score at or above --fail-score {}", *gate.fail_score);
    if (gate.fail_savings && 100.0 * t.recoverable_share >= *gate.fail_savings)
      message += fmt::format("; recoverable ~{:.1f}% at or above --fail-savings {}", 100.0 * t.recoverable_share, *gate.fail_savings);
    const char* type = failing.empty() ? (score_high ? "flagged" : "savings") : t.baseline.empty() ? "flagged" : "new or worse";
    cases += fmt::format(">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n", type, xml_escape(message),
                         xml_escape(body));
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
