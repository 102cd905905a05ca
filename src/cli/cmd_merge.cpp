// `ttap merge REPORT...`: analyze reports (JSON, or the JSONL stream of --format jsonl;
// shards of one run or runs of different days) rendered as one report, with the view
// across the fleet after the per-trace verdicts. The exit code is the one `ttap analyze`
// of all the traces would give, and 2 at least when a report could not be read whole.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "jsonl_writer.hpp"
#include "ttap/fleet.hpp"
#include "ttap/input.hpp"
#include "ttap/report_reader.hpp"

namespace ttap::cli {

namespace {

std::string with_fleet_section(std::string report_text, const FleetSummary& fleet, const std::string& format) {
  if (format == "json") return append_json_member(std::move(report_text), "fleet", render_fleet_json(fleet));
  if (format == "md") return report_text + "\n" + render_fleet_markdown(fleet);
  if (format == "text") return report_text + "\n" + render_fleet_text(fleet);
  return report_text;  // sarif, junit, html: per-trace formats without a place for it
}

}  // namespace

int run_merge(const MergeOptions& o) {
  std::vector<Report> reports;
  std::vector<std::string> problems;
  for (const std::string& path : o.reports) {
    std::error_code ec;
    if (path != "-" && std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0 && !ec)
      continue;  // an empty shard (no traces fell to it): nothing to merge, nothing wrong
    try {
      RawInput raw = read_input(path, default_max_input_bytes());
      ReadReports read = read_analyze_reports(std::string_view(raw.json.data(), raw.json.size()), path);
      std::move(read.reports.begin(), read.reports.end(), std::back_inserter(reports));
      problems.insert(problems.end(), read.problems.begin(), read.problems.end());
    } catch (const InputError& e) {
      problems.push_back(e.what());
    }
  }
  MergedReport merged = merge_reports(std::move(reports));
  Report& report = merged.report;
  if (report.tool_version.empty()) report.tool_version = "unknown";
  for (const std::string& p : problems) report.warnings.push_back(p);

  if (o.format == "jsonl") {
    JsonlWriter lines(o.output);
    for (const TraceReport& t : report.traces) lines.write(render_analyze_jsonl_line(report, t));
    if (!lines.error().empty()) problems.push_back(lines.error());
  } else {
    std::string out = render_analyze_report(report, o.format, want_color(o.output));
    if (o.fleet) out = with_fleet_section(std::move(out), summarize_fleet(report, merged.duplicates), o.format);
    write_output(o.output, out);
  }

  int code = report_exit_code(report);
  for (const std::string& p : problems) spdlog::error("{}", p);
  if (!problems.empty()) code = std::max<int>(code, kBadInput);
  if (merged.duplicates) spdlog::info("{} duplicate traces (same path and content) counted once", merged.duplicates);
  return code;
}

}  // namespace ttap::cli
