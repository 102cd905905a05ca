// Many analyze reports into one: shards of a run, or runs of different days.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "ttap/fleet.hpp"

namespace ttap {

namespace {

bool same_settings(const ReportSettings& a, const ReportSettings& b) {
  return a.windows == b.windows && a.top_k == b.top_k && a.flag_spacing == b.flag_spacing && a.scorer == b.scorer && a.fail_on == b.fail_on && a.fail_score == b.fail_score &&
         a.fail_savings == b.fail_savings && a.llm == b.llm;
}

void add_once(std::vector<std::string>& list, const std::string& w) {
  if (std::find(list.begin(), list.end(), w) == list.end()) list.push_back(w);
}

}  // namespace

MergedReport merge_reports(std::vector<Report> reports) {
  MergedReport m;
  if (reports.empty()) return m;
  Report& out = m.report;
  out.tool_version = reports.front().tool_version;
  out.settings = reports.front().settings;
  // Errors have no content hash: the same path failing twice is one failure.
  std::set<std::pair<std::string, std::string>> seen;
  for (Report& r : reports) {
    if (!same_settings(r.settings, out.settings))
      add_once(out.warnings, fmt::format("reports were made with different settings (e.g. scorer {} and {}, top-k {} and {}): verdicts may not compare",
                                         out.settings.scorer, r.settings.scorer, out.settings.top_k, r.settings.top_k));
    if (r.tool_version != out.tool_version)
      add_once(out.warnings, fmt::format("reports come from different ttap versions ({} and {})", out.tool_version, r.tool_version));
    for (const std::string& w : r.warnings) add_once(out.warnings, w);
    for (TraceReport& t : r.traces) {
      const std::string key = t.verdict == Verdict::error ? std::string("error") : t.content_hash;
      if (!seen.emplace(t.path, key).second) {
        ++m.duplicates;
        continue;
      }
      out.traces.push_back(std::move(t));
    }
  }
  // The order `ttap analyze` of one folder gives: sorted paths (the shards interleave).
  std::stable_sort(out.traces.begin(), out.traces.end(), [](const TraceReport& a, const TraceReport& b) { return a.path < b.path; });
  return m;
}

}  // namespace ttap
