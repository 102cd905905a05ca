// The fleet view as text (tables), Markdown and a JSON object (docs/fleet.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyze_common.hpp"
#include "ttap/fleet.hpp"
#include "ttap/table.hpp"

namespace ttap {

namespace {

using namespace analyze_render;

std::string num(double d) { return std::isfinite(d) ? fmt::format("{}", d) : "null"; }

std::string counts_line(const FleetSummary& f) {
  return fmt::format("{}{}: {} clean, {} flagged, {}", count_text(f.traces, "trace"),
                     f.duplicates ? fmt::format(" ({} counted once)", count_text(f.duplicates, "duplicate")) : "", f.clean,
                     f.flagged, count_text(f.errors, "error"));
}

std::string bin_label(size_t i) { return fmt::format("{:.1f}-{:.1f}", static_cast<double>(i) / 10, static_cast<double>(i + 1) / 10); }

std::string bar(size_t n, size_t most) {
  constexpr size_t kWidth = 40;
  return std::string(most ? (n * kWidth + most - 1) / most : 0, '#');
}

}  // namespace

std::string render_fleet_text(const FleetSummary& f) {
  std::string out = fmt::format("fleet: {}\n\n", counts_line(f));
  if (!f.findings.empty()) {
    Table t{"fleet_findings", "Findings across the fleet, by profiled time their fixes would have saved", {{"id"}, {"worst"}, {"traces"}, {"saved (sum)"}, {"mean step share", 3}, {"cost (sum)"}}, {}, "", 0};
    for (const FleetFinding& x : f.findings)
      t.rows.push_back({x.id, std::string(severity_name(x.worst)), static_cast<int64_t>(x.traces),
                        x.traces_with_saving ? Cell{ms(x.saved)} : Cell{std::string("-")},
                        x.traces_with_saving ? Cell{x.mean_step_share} : Cell{std::string("-")}, ms(x.cost)});
    t.total_rows = t.rows.size();
    out += render_text(t) + "\n";
  }
  if (!f.worst.empty()) {
    Table t{"fleet_worst_traces", "Worst traces, by score", {{"score", 3}, {"verdict"}, {"findings"}, {"top finding"}, {"path"}}, {}, "", 0};
    for (const FleetTrace& x : f.worst)
      t.rows.push_back({x.score, std::string(verdict_name(x.verdict)), static_cast<int64_t>(x.findings), x.top_id, x.path});
    t.total_rows = t.rows.size();
    out += render_text(t) + "\n";
  }
  if (f.scores.count) {
    out += fmt::format("Trace scores: {} scored, p50 {:.3f}, p90 {:.3f}, max {:.3f}\n", f.scores.count, f.scores.p50, f.scores.p90, f.scores.max);
    const size_t most = *std::max_element(f.scores.histogram.begin(), f.scores.histogram.end());
    for (size_t i = 0; i < f.scores.histogram.size(); ++i)
      out += fmt::format("  {}  {:>5}  {}\n", bin_label(i), f.scores.histogram[i], bar(f.scores.histogram[i], most));
  }
  return out;
}

std::string render_fleet_markdown(const FleetSummary& f) {
  std::string out = fmt::format("## Fleet\n\n{}.\n\n", counts_line(f));
  if (!f.findings.empty()) {
    out += "| id | worst | traces | saved (sum) | mean step share | cost (sum) |\n|---|---|---:|---:|---:|---:|\n";
    for (const FleetFinding& x : f.findings)
      out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", x.id, severity_name(x.worst), x.traces,
                         x.traces_with_saving ? ms(x.saved) : "-",
                         x.traces_with_saving ? fmt::format("{:.1f}%", 100 * x.mean_step_share) : "-", ms(x.cost));
    out += "\n";
  }
  if (!f.worst.empty()) {
    out += "Worst traces:\n\n| score | verdict | findings | top finding | path |\n|---:|---|---:|---|---|\n";
    for (const FleetTrace& x : f.worst)
      out += fmt::format("| {:.3f} | {} | {} | {} | `{}` |\n", x.score, verdict_name(x.verdict), x.findings, x.top_id.empty() ? "" : "`" + x.top_id + "`", x.path);
    out += "\n";
  }
  if (f.scores.count) {
    out += fmt::format("Trace scores: {} scored, p50 {:.3f}, p90 {:.3f}, max {:.3f}.\n\n| score | traces |\n|---|---:|\n", f.scores.count,
                       f.scores.p50, f.scores.p90, f.scores.max);
    for (size_t i = 0; i < f.scores.histogram.size(); ++i) out += fmt::format("| {} | {} |\n", bin_label(i), f.scores.histogram[i]);
    out += "\n";
  }
  return out;
}

std::string render_fleet_json(const FleetSummary& f) {
  std::string findings, worst, histogram;
  for (const FleetFinding& x : f.findings)
    findings += fmt::format(R"({}{{"id":{},"name":{},"worst":{},"traces":{},"saved_ns":{},"mean_step_share":{},"traces_with_saving":{},"cost_ns":{}}})",
                            findings.empty() ? "" : ",", json_string(x.id), json_string(x.name), json_string(severity_name(x.worst)), x.traces,
                            x.saved, num(x.mean_step_share), x.traces_with_saving, x.cost);
  for (const FleetTrace& x : f.worst)
    worst += fmt::format(R"({}{{"path":{},"verdict":{},"score":{},"findings":{},"top_finding":{}}})", worst.empty() ? "" : ",",
                         json_string(x.path), json_string(verdict_name(x.verdict)), num(x.score), x.findings,
                         x.top_id.empty() ? "null" : json_string(x.top_id));
  for (size_t n : f.scores.histogram) histogram += fmt::format("{}{}", histogram.empty() ? "" : ",", n);
  return fmt::format(
      R"({{"traces":{},"clean":{},"flagged":{},"errors":{},"duplicates":{},"findings":[{}],"worst_traces":[{}],"scores":{{"count":{},"p50":{},"p90":{},"max":{},"histogram":[{}]}}}})",
      f.traces, f.clean, f.flagged, f.errors, f.duplicates, findings, worst, f.scores.count, num(f.scores.p50), num(f.scores.p90),
      num(f.scores.max), histogram);
}

std::string append_json_member(std::string object_text, std::string_view key, const std::string& value) {
  const size_t close = object_text.find_last_of('}');
  if (close == std::string::npos) return object_text;
  const size_t before = object_text.find_last_not_of(" \t\r\n", close == 0 ? 0 : close - 1);
  const bool empty_object = before != std::string::npos && object_text[before] == '{';
  object_text.insert(close, fmt::format("{}{}:{}", empty_object ? "" : ",", json_string(key), value));
  return object_text;
}

}  // namespace ttap
