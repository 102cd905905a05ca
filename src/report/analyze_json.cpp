// JSON, "schema": "ttap.analyze/2" (docs/analyze-json.md). Times are integer nanoseconds
// in the trace's time base (suffix _ns); shares are fractions in [0, 1].
#include <fmt/format.h>

#include <cmath>

#include "analyze_common.hpp"
#include "ttap/table.hpp"

namespace ttap {

namespace {

using namespace analyze_render;

std::string num(double d) { return std::isfinite(d) ? fmt::format("{}", d) : "null"; }
std::string boolean(bool b) { return b ? "true" : "false"; }

template <typename T, typename F>
std::string array(const std::vector<T>& items, F each) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + each(items[i]);
  return out + "]";
}

std::string saving(const Saving& s) {
  return fmt::format(R"({{"id":{},"fix":{},"saved_per_step_ns":{},"step_share":{},"model":{},"per_step":{},"bound_ns":{}}})",
                     json_string(s.id), json_string(s.fix), s.saved_per_step, num(s.step_share), json_string(s.model),
                     boolean(s.per_step), s.bound);
}

std::string location_json(const CodeLocation& l) {
  return fmt::format(R"({{"file":{},"line":{},"function":{}}})", json_string(l.file), l.line, json_string(l.function));
}

std::string finding(const Finding& f) {
  return fmt::format(
      R"({{"id":{},"name":{},"severity":{},"confidence":{},"source":{},"begin_ns":{},"end_ns":{},"cost_ns":{},"evidence":{},"fix":{},"explanation":{},"saving":{},"locations":{},"origin":{},"one_time":{}}})",
      json_string(f.id), json_string(f.name), json_string(severity_name(f.severity)), num(f.confidence), json_string(f.source), f.begin, f.end, f.cost,
      array(f.evidence, [](const std::string& e) { return json_string(e); }), json_string(f.fix),
      f.explanation.empty() ? "null" : json_string(f.explanation), f.saving ? saving(*f.saving) : "null",
      array(f.locations, location_json), json_string(f.origin), boolean(f.one_time));
}

std::string optional_ns(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "null"; }

std::string group(const GroupedFinding& g) {
  return fmt::format(
      R"({{"id":{},"name":{},"origin":{},"severity":{},"confidence":{},"source":{},"occurrence_count":{},"occurrences":{},"steps":{},"windows":{},"steady_state":{},"cost_ns":{},"cost_per_step_ns":{},"share":{},"saving":{},"rank_share":{},"evidence":{},"fix":{},"explanation":{},"locations":{},"baseline_state":{},"baseline_cost_per_step_ns":{},"baseline_share":{},"one_time":{},"severity_share":{},"severity_windows_share":{}}})",
      json_string(g.id), json_string(g.name), json_string(g.origin), json_string(severity_name(g.severity)), num(g.confidence),
      json_string(g.source), g.occurrence_count,
      array(g.occurrences,
            [](const Occurrence& o) {
              return fmt::format(R"({{"begin_ns":{},"end_ns":{},"step":{},"window":{}}})", o.begin, o.end,
                                 o.step >= 0 ? std::to_string(o.step) : "null", o.window >= 0 ? std::to_string(o.window) : "null");
            }),
      array(g.steps, [](int64_t s) { return std::to_string(s); }), array(g.windows, [](uint32_t w) { return std::to_string(w); }),
      boolean(g.steady_state), g.cost, optional_ns(g.cost_per_step), num(g.share), g.saving ? saving(*g.saving) : "null", num(g.rank_share),
      array(g.evidence, [](const std::string& e) { return json_string(e); }), json_string(g.fix),
      g.explanation.empty() ? "null" : json_string(g.explanation), array(g.locations, location_json),
      g.baseline == BaselineState::none ? "null" : json_string(baseline_state_name(g.baseline)), optional_ns(g.baseline_cost_per_step),
      g.baseline_share ? num(*g.baseline_share) : "null", boolean(g.one_time),
      g.severity_share ? num(*g.severity_share) : "null", g.severity_windows_share ? num(*g.severity_windows_share) : "null");
}

std::string baseline(const TraceReport& t) {
  if (t.baseline.empty()) return "null";
  return fmt::format(
      R"({{"trace":{},"new":{},"worse":{},"better":{},"unchanged":{},"fixed":{},"fixed_findings":{},"still_present":{},"still_present_findings":{}}})",
      json_string(t.baseline), count_state(t.findings, BaselineState::added), count_state(t.findings, BaselineState::worse),
      count_state(t.findings, BaselineState::better), count_state(t.findings, BaselineState::unchanged), t.fixed.size(),
      array(t.fixed, group), t.still_present.size(), array(t.still_present, group));
}

std::string headline(const Headline& h) {
  std::string steps = h.steps > 0 ? fmt::format(R"({{"count":{},"mean_ns":{},"gpu_busy_share":{},"dataloader_share":{}}})",
                                                h.steps, h.step_mean, num(h.step_gpu_busy), num(h.step_dataloader))
                                  : "null";
  std::string launches = h.launches > 0 ? fmt::format(R"({{"count":{},"short_kernel_share":{},"delay_p50_ns":{},"delay_p95_ns":{}}})",
                                                      h.launches, num(h.short_kernel_share), h.launch_delay_p50, h.launch_delay_p95)
                                        : "null";
  std::string tracer = h.python_tracer_per_step > 0
                           ? fmt::format(R"({{"per_step_ns":{},"per_event_ns":{},"events_per_step":{},"calls_timed":{}}})",
                                         h.python_tracer_per_step, h.python_tracer_per_event, h.python_functions_per_step,
                                         h.python_tracer_calls_timed)
                           : "null";
  return fmt::format(R"({{"gpus":{},"categories":{},"steps":{},"launches":{},"recoverable":{},"python_functions":{},"python_tracer":{}}})",
                     array(h.gpus, [](const GpuHeadline& g) {
                       return fmt::format(
                           R"({{"device":{},"scope":{},"total_ns":{},"busy_ns":{},"idle_ns":{},"computation_ns":{},"exposed_communication_ns":{},"exposed_memcpy_ns":{}}})",
                           g.device, json_string(g.scope), g.total, g.busy, g.idle, g.computation, g.exposed_communication, g.exposed_memcpy);
                     }),
                     array(h.categories, [](const CategoryShare& c) { return fmt::format(R"({{"category":{},"share":{}}})", json_string(c.category), num(c.share)); }),
                     steps, launches, h.recoverable ? saving(*h.recoverable) : "null", h.python_functions, tracer);
}

std::string hash(const TraceReport& t) { return t.content_hash.empty() ? "null" : json_string(t.content_hash); }

std::string trace(const TraceReport& t) {
  if (t.verdict == Verdict::error)
    return fmt::format(R"({{"path":{},"content_hash":{},"verdict":"error","gate_failed":true,"error":{},"internal_error":{},"seconds":{}}})",
                       json_string(t.path), hash(t), json_string(t.error), boolean(t.internal_error), num(t.seconds));
  return fmt::format(
      R"({{"path":{},"content_hash":{},"verdict":{},"gate_failed":{},"error":null,"score":{},"scorer":{},"device":{},"steady_state":{{"source":{},"begin_ns":{},"end_ns":{},"trace_start_ns":{}}},"headline":{},"savings":{},"findings":{},"recoverable_share":{},"baseline":{},"windows":{},"flagged_windows":{},"suppressed":{},"warnings":{},"seconds":{}}})",
      json_string(t.path), hash(t), json_string(verdict_name(t.verdict)), boolean(t.gate_failed), t.scorer.empty() ? "null" : num(t.score),
      t.scorer.empty() ? "null" : json_string(t.scorer), t.device.empty() ? "null" : json_string(t.device), json_string(t.steady_state), t.begin, t.end, t.origin,
      headline(t.headline), array(t.savings, saving), array(t.findings, group), num(t.recoverable_share), baseline(t),
      array(t.windows, [](const WindowScore& w) {
        return fmt::format(R"({{"index":{},"begin_ns":{},"end_ns":{},"score":{},"gpu_busy":{},"flagged":{}}})", w.index, w.begin, w.end,
                           num(w.score), num(w.gpu_busy), boolean(w.flagged));
      }),
      array(t.flagged, [](const FlaggedWindow& w) {
        return fmt::format(R"({{"scope":{},"index":{},"begin_ns":{},"end_ns":{},"score":{},"findings":{}}})",
                           json_string(w.steady_state ? "steady_state" : "window"), w.steady_state ? "null" : std::to_string(w.index),
                           w.begin, w.end, num(w.score), array(w.findings, finding));
      }),
      t.suppressed, array(t.warnings, [](const std::string& w) { return json_string(w); }), num(t.seconds));
}

}  // namespace

std::string render_analyze_json(const Report& report) {
  const Counts c = count(report);
  const ReportSettings& s = report.settings;
  return fmt::format(
      R"({{"schema":"ttap.analyze/2","tool":{{"name":"ttap","version":{}}},"settings":{{"windows":{},"top_k":{},"flag_spacing":{},"scorer":{},"fail_on":{},"fail_score":{},"fail_savings":{},"baseline":{},"regress":{},"llm":{},"config":{}}},"summary":{{"traces":{},"clean":{},"flagged":{},"errors":{},"gate_failed":{},"findings":{},"window_findings":{},"baseline":{}}},"warnings":{},"traces":{}}})"
      "\n",
      json_string(report.tool_version), s.windows, s.top_k, s.flag_spacing, json_string(s.scorer), json_string(s.fail_on), s.fail_score ? num(*s.fail_score) : "null",
      s.fail_savings ? num(*s.fail_savings) : "null", s.baseline.empty() ? "null" : json_string(s.baseline), num(s.regress), boolean(s.llm),
      s.config.empty() ? "null" : json_string(s.config), report.traces.size(), c.clean, c.flagged, c.errors, c.gate_failed, c.findings,
      c.window_findings,
      s.baseline.empty() ? "null"
                         : fmt::format(R"({{"new":{},"worse":{},"better":{},"unchanged":{},"fixed":{},"still_present":{}}})",
                                       c.added, c.worse, c.better, c.unchanged, c.fixed, c.still_present),
      array(report.warnings, [](const std::string& w) { return json_string(w); }), array(report.traces, trace));
}

}  // namespace ttap
