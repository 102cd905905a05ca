// SARIF 2.1.0 for GitHub code scanning and other SARIF viewers: one rule per catalog id,
// one result per finding. A result points at the user's Python file and line when the
// trace's python_function frames showed it, else at the trace file itself. Traces that
// could not be analyzed become error notifications of the run.
#include <fmt/format.h>

#include "analyze_common.hpp"
#include "ttap/catalog.hpp"
#include "ttap/table.hpp"

namespace ttap {

namespace {

using namespace analyze_render;


std::string_view sarif_level(Severity s) { return s == Severity::error ? "error" : s == Severity::warning ? "warning" : "note"; }

// SARIF wants URIs. Relative paths stay relative to the checkout (%SRCROOT%), which is how
// code scanning maps them onto the repository; absolute ones become file:// URIs.
std::string artifact(const std::string& path) {
  std::string uri;
  for (unsigned char c : path) {
    if (c == ' ' || c == '%' || c == '#' || c == '?' || c < 0x20) uri += fmt::format("%{:02X}", c);
    else uri += static_cast<char>(c);
  }
  if (!path.empty() && path.front() == '/') return fmt::format(R"({{"uri":{}}})", json_string("file://" + uri));
  if (uri.starts_with("./")) uri.erase(0, 2);
  return fmt::format(R"({{"uri":{},"uriBaseId":"%SRCROOT%"}})", json_string(uri));
}

std::string location(const std::string& path, int line, const std::string& message) {
  const std::string region = line > 0 ? fmt::format(R"(,"region":{{"startLine":{}}})", line) : "";
  const std::string msg = message.empty() ? "" : fmt::format(R"(,"message":{{"text":{}}})", json_string(message));
  return fmt::format(R"({{"physicalLocation":{{"artifactLocation":{}{}}}{}}})", artifact(path), region, msg);
}

std::string result(const TraceReport& t, const FlaggedWindow& w, const Finding& f, size_t rule_index) {
  std::string text = fmt::format("{}: {} in {} ({}, {} .. {}, score {:.2f}).", f.id, f.name, t.path, flagged_label(w),
                                 offset_ms(t, w.begin), offset_ms(t, w.end), w.score);
  if (f.cost > 0) text += fmt::format(" Costs {} there.", ms(f.cost));
  if (f.saving) text += fmt::format(" What-if: fixing it saves {}.", saving_text(*f.saving));
  for (const auto& e : f.evidence) text += " " + e + ".";
  if (!f.fix.empty()) text += " Fix: " + f.fix;
  std::string locations;
  if (f.locations.empty()) {
    locations = location(t.path, 0, "");
  } else {
    for (size_t i = 0; i < f.locations.size(); ++i)
      locations += (i ? "," : "") + location(f.locations[i].file, f.locations[i].line, f.locations[i].function);
  }
  // The trace is where the evidence lives; related to every result.
  const std::string related = fmt::format(R"([{{"id":0,"physicalLocation":{{"artifactLocation":{}}},"message":{{"text":"profiler trace"}}}}])",
                                          artifact(t.path));
  return fmt::format(
      R"({{"ruleId":{}{},"level":{},"message":{{"text":{}}},"locations":[{}],"relatedLocations":{},"partialFingerprints":{{"ttapFinding/v1":{}}},"properties":{{"trace":{},"window":{},"beginNs":{},"endNs":{},"windowScore":{},"confidence":{},"costNs":{},"source":{}}}}})",
      json_string(f.id), rule_index < catalog().size() ? fmt::format(",\"ruleIndex\":{}", rule_index) : "", json_string(sarif_level(f.severity)), json_string(text), locations, related,
      json_string(fmt::format("{}:{}:{}", f.id, f.locations.empty() ? t.path : f.locations[0].file, f.locations.empty() ? 0 : f.locations[0].line)),
      json_string(t.path), w.steady_state ? "null" : std::to_string(w.index), f.begin, f.end, w.score, f.confidence, f.cost, json_string(f.source));
}

}  // namespace

std::string render_analyze_sarif(const Report& report) {
  std::string rules;
  size_t index = 0;
  for (const AntiPattern& ap : catalog()) {
    rules += fmt::format(
        R"({}{{"id":{},"name":{},"shortDescription":{{"text":{}}},"fullDescription":{{"text":{}}},"help":{{"text":{},"markdown":{}}},"defaultConfiguration":{{"level":"warning"}},"properties":{{"tags":["performance","pytorch"]}}}})",
        index++ ? "," : "", json_string(ap.id), json_string(ap.id), json_string(ap.name), json_string(ap.signature), json_string(fmt::format("Fix: {}", ap.fix)),
        json_string(fmt::format("**{}**\n\nSignature in the trace: {}\n\nFix: {}", ap.name, ap.signature, ap.fix)));
  }
  std::string results;
  std::string notifications;
  bool ok = true;
  for (const TraceReport& t : report.traces) {
    if (t.verdict == Verdict::error) {
      ok = false;
      notifications += fmt::format(R"({}{{"level":"error","message":{{"text":{}}},"locations":[{}]}})", notifications.empty() ? "" : ",",
                                   json_string(fmt::format("{}: {}", t.path, t.error)), location(t.path, 0, ""));
      continue;
    }
    for (const FlaggedWindow& w : t.flagged)
      for (const Finding& f : w.findings) {
        size_t rule_index = 0;
        for (const AntiPattern& ap : catalog()) {
          if (ap.id == f.id) break;
          ++rule_index;
        }
        results += (results.empty() ? "" : ",") + result(t, w, f, rule_index);
      }
  }
  return fmt::format(
      R"({{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0","runs":[{{"tool":{{"driver":{{"name":"ttap","semanticVersion":{},"version":{},"rules":[{}]}}}},"invocations":[{{"executionSuccessful":{},"toolExecutionNotifications":[{}]}}],"results":[{}]}}]}})"
      "\n",
      json_string(report.tool_version), json_string(report.tool_version), rules, ok ? "true" : "false", notifications, results);
}

}  // namespace ttap
