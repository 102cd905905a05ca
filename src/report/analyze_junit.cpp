// JUnit XML, which every CI system can display: one testcase per trace. A flagged trace (a
// finding of severity warning or above, or the score at --fail-score) is a failure, one
// that could not be analyzed an error; the exit code is the gate's (--fail-on) business.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analyze_common.hpp"

namespace ttap {

using namespace analyze_render;

std::string render_analyze_junit(const Report& report) {
  const Counts c = count(report);
  double seconds = 0;
  for (const auto& t : report.traces) seconds += t.seconds;
  size_t failures = 0;
  for (const auto& t : report.traces) failures += t.verdict == Verdict::flagged;
  std::string cases;
  for (const TraceReport& t : report.traces) {
    cases += fmt::format("    <testcase classname=\"ttap.analyze\" name=\"{}\" time=\"{:.3f}\"", xml_escape(t.path), t.seconds);
    if (t.verdict == Verdict::error) {
      cases += fmt::format(">\n      <error type=\"{}\" message=\"{}\"/>\n    </testcase>\n", t.internal_error ? "internal" : "input",
                           xml_escape(t.error));
      continue;
    }
    std::string body;
    for (const FlaggedWindow& w : t.flagged)
      for (const Finding& f : w.findings) {
        body += fmt::format("[{}] {}: {} ({}, {} .. {}, score {:.2f})\n", severity_label(f.severity), f.id, f.name, flagged_label(w),
                            offset_ms(t, w.begin), offset_ms(t, w.end), w.score);
        for (const auto& l : f.locations) body += fmt::format("  at {}\n", location_text(l));
        for (const auto& e : f.evidence) body += fmt::format("  - {}\n", e);
        if (f.saving) body += fmt::format("  what-if: {}\n", saving_text(*f.saving));
        if (!f.fix.empty()) body += fmt::format("  fix: {}\n", f.fix);
      }
    if (t.verdict != Verdict::flagged) {
      cases += body.empty() ? "/>\n" : fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml_escape(body));
      continue;
    }
    const auto ids = finding_ids(t);
    std::string message = fmt::format("{} finding(s), score {:.2f}", finding_count(t), t.score);
    if (!ids.empty()) message += ": " + fmt::format("{}", fmt::join(ids, ", "));
    cases += fmt::format(">\n      <failure type=\"flagged\" message=\"{}\">{}</failure>\n    </testcase>\n", xml_escape(message), xml_escape(body));
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
