// A baseline read back from an earlier `ttap analyze --format json` (or jsonl) report with
// the one reader of the schema (report_reader.hpp): per trace its path and grouped
// findings, what compare_with_baseline matches on.
#include <fmt/format.h>

#include "classify.hpp"
#include "ttap/input.hpp"
#include "ttap/report_reader.hpp"

namespace ttap {

namespace {

// The schema a report names at its start ("ttap.analyze/2"), "" when the bytes do not
// begin like a report. Whitespace as any JSON writer may put it (jq, json.dump).
std::string_view schema_named(std::string_view bytes) {
  const std::string_view head = bytes.substr(0, 512);
  const size_t key = head.find("\"schema\"");
  if (key == std::string_view::npos) return {};
  size_t at = head.find_first_not_of(" \t\r\n", key + 8);
  if (at == std::string_view::npos || head[at] != ':') return {};
  at = head.find_first_not_of(" \t\r\n", at + 1);
  if (at == std::string_view::npos || head[at] != '"') return {};
  const size_t end = head.find('"', at + 1);
  if (end == std::string_view::npos) return {};
  const std::string_view schema = head.substr(at + 1, end - at - 1);
  return schema.starts_with("ttap.analyze/") ? schema : std::string_view{};
}

}  // namespace

bool looks_like_analyze_report(std::string_view bytes) {
  // A report starts with its schema; a trace never names one.
  return !schema_named(bytes).empty();
}

std::vector<TraceReport> read_baseline_report(const std::string& source, std::string_view bytes,
                                              std::vector<ReportSettings>* settings) {
  // ttap.analyze/1 reports have no grouped findings: every finding would read as new.
  if (schema_named(bytes) == "ttap.analyze/1")
    throw InputError(source, "baseline: a ttap.analyze/1 report has no grouped findings; expected ttap.analyze/2 "
                             "(run this ttap's `analyze --format json` on the baseline trace again)");
  ReadReports read = read_analyze_reports(bytes, source);
  if (!read.problems.empty()) throw InputError(source, fmt::format("baseline: {}", read.problems.front()));
  std::vector<TraceReport> out;
  for (Report& r : read.reports) {
    if (settings) settings->push_back(r.settings);
    for (TraceReport& t : r.traces) out.push_back(std::move(t));
  }
  return out;
}

const TraceReport* baseline_for(const std::vector<TraceReport>& base, const std::string& path) {
  auto usable = [](const TraceReport& t) { return t.verdict != Verdict::error; };
  for (const TraceReport& b : base)
    if (usable(b) && b.path == path) return &b;
  auto file_name = [](const std::string& p) { return p.substr(p.find_last_of('/') + 1); };
  for (const TraceReport& b : base)
    if (usable(b) && file_name(b.path) == file_name(path)) return &b;
  if (base.size() == 1 && usable(base.front())) return &base.front();
  return nullptr;
}

}  // namespace ttap
