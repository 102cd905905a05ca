// SARIF 2.1.0 for GitHub code scanning and other SARIF viewers: one rule per catalog id,
// one result per grouped finding (with --baseline, also one per fixed one, "absent"). A result points at the user's Python file and line when the
// trace's python_function frames showed it, else at the trace file itself. Traces that
// could not be analyzed become error notifications of the run.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analyze_common.hpp"
#include "ttap/catalog.hpp"
#include "ttap/strings.hpp"
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

// SARIF's baselineState: "updated" is its word for a result that changed (ours: worse or
// better; the result's property baseline says which), "absent" for one the baseline had
// and this run does not (fixed).
std::string_view sarif_baseline_state(BaselineState s) {
  switch (s) {
    case BaselineState::none: return "";
    case BaselineState::added: return "new";
    case BaselineState::unchanged: return "unchanged";
    case BaselineState::worse:
    case BaselineState::better: return "updated";
    case BaselineState::fixed: return "absent";
  }
  return "";
}

size_t rule_index_of(const std::string& id) {
  size_t i = 0;
  for (const AntiPattern& ap : catalog()) {
    if (ap.id == id) break;
    ++i;
  }
  return i;
}

// One result per grouped finding: the same problem in the same trace is one result in every
// run, with one fingerprint (its id, origin and trace), so code scanning follows it across
// runs and never sees two results as one.
// A baseline finding still here below the report's listed findings (`below`) is a note: it
// does not fail the gate.
std::string result(const TraceReport& t, const GroupedFinding& g, bool below = false) {
  std::string text = fmt::format("{}: {} in {}", g.id, g.name, t.path);
  if (!g.origin.empty()) text += fmt::format(", in {}", g.origin);
  text += fmt::format(": {}. Costs {}.", occurrences_text(g), group_cost_text(g));
  if (g.saving) text += fmt::format(" What-if: fixing it saves {}.", saving_text(*g.saving));
  // The baseline's share is of its steps only where it had them (baseline_cost_text): vLLM's
  // eager run against xDiT's capture read "Better than the baseline (2.8% of step time there)"
  // where neither has a step.
  if ((g.baseline == BaselineState::worse || g.baseline == BaselineState::better) && g.baseline_share)
    text += fmt::format(" {} than the baseline ({:.1f}% of {} there).", g.baseline == BaselineState::worse ? "Worse" : "Better",
                        100.0 * *g.baseline_share, g.baseline_cost_per_step ? "step time" : "the steady state");
  if (g.baseline == BaselineState::fixed) text = "Fixed since the baseline: " + text;
  if (below) text = "Still here from the baseline, below this report's findings: " + text;
  for (const auto& e : g.evidence) text += " " + e + ".";
  if (!g.fix.empty()) text += " Fix: " + g.fix;
  std::string locations;
  if (g.locations.empty()) {
    locations = location(t.path, 0, "");
  } else {
    for (size_t i = 0; i < g.locations.size(); ++i)
      locations += (i ? "," : "") + location(g.locations[i].file, g.locations[i].line, g.locations[i].function);
  }
  // The trace is where the evidence lives; related to every result.
  const std::string related = fmt::format(R"([{{"id":0,"physicalLocation":{{"artifactLocation":{}}},"message":{{"text":"profiler trace"}}}}])",
                                          artifact(t.path));
  const std::string fingerprint = fmt::format("{:016x}", hash_bytes(fmt::format("{}\n{}\n{}", g.id, g.origin, t.path)));
  const std::string_view state = sarif_baseline_state(g.baseline);
  std::vector<std::string> windows;
  for (uint32_t w : g.windows) windows.push_back(std::to_string(w));
  const size_t rule_index = rule_index_of(g.id);
  return fmt::format(
      R"({{"ruleId":{}{},"level":{},"message":{{"text":{}}},"locations":[{}],"relatedLocations":{},"partialFingerprints":{{"ttapFinding/v2":{}}}{},"properties":{{"trace":{},"origin":{},"occurrences":{},"windows":[{}],"costNs":{},"costPerStepNs":{},"share":{},"confidence":{},"source":{},"oneTime":{}{}}}}})",
      json_string(g.id), rule_index < catalog().size() ? fmt::format(",\"ruleIndex\":{}", rule_index) : "",
      json_string(g.baseline == BaselineState::fixed ? "none" : below ? "note" : sarif_level(g.severity)), json_string(text), locations, related,
      json_string(fingerprint), state.empty() ? "" : fmt::format(R"(,"baselineState":{})", json_string(state)), json_string(t.path),
      json_string(g.origin), g.occurrence_count, fmt::join(windows, ","), g.cost, g.cost_per_step ? std::to_string(*g.cost_per_step) : "null",
      g.share, g.confidence, json_string(g.source), g.one_time ? "true" : "false",
      state.empty() ? "" : fmt::format(R"(,"baseline":{})", json_string(baseline_state_name(g.baseline))));
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
    for (const GroupedFinding& g : t.findings) results += (results.empty() ? "" : ",") + result(t, g);
    for (const GroupedFinding& g : t.fixed) results += (results.empty() ? "" : ",") + result(t, g);
    for (const GroupedFinding& g : t.still_present) results += (results.empty() ? "" : ",") + result(t, g, true);
  }
  return fmt::format(
      R"({{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0","runs":[{{"tool":{{"driver":{{"name":"ttap","semanticVersion":{},"version":{},"rules":[{}]}}}},"invocations":[{{"executionSuccessful":{},"toolExecutionNotifications":[{}]}}],"results":[{}]}}]}})"
      "\n",
      json_string(report.tool_version), json_string(report.tool_version), rules, ok ? "true" : "false", notifications, results);
}

}  // namespace ttap
