// The inverse of analyze_json.cpp: `ttap.analyze/2` JSON (and /1, which has no grouped
// findings) back into a Report, field by
// field (docs/analyze-json.md). Members this reader does not know are skipped, so reports
// that carry more (the fleet or job sections, later additions within the schema) still
// read; a missing required member or a wrong type is an InputError naming the field.
#include "ttap/report_reader.hpp"

#include <simdjson.h>

#include <fmt/format.h>

#include "ttap/input.hpp"

namespace ttap {

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

class Reader {
 public:
  explicit Reader(std::string where) : where_(std::move(where)) {}

  [[noreturn]] void fail(std::string_view field, std::string_view what) const {
    throw InputError(where_, fmt::format("{}: {}", field, what));
  }

  element member(object o, std::string_view key) const {
    element v;
    if (o[key].get(v) != simdjson::SUCCESS) fail(key, "missing");
    return v;
  }
  bool has(object o, std::string_view key) const {
    element v;
    return o[key].get(v) == simdjson::SUCCESS && !v.is_null();
  }
  object obj(element v, std::string_view field) const {
    object o;
    if (v.get_object().get(o) != simdjson::SUCCESS) fail(field, "must be an object");
    return o;
  }
  array arr(object o, std::string_view key) const {
    array a;
    if (member(o, key).get_array().get(a) != simdjson::SUCCESS) fail(key, "must be an array");
    return a;
  }
  std::string str(object o, std::string_view key) const {
    std::string_view s;
    if (member(o, key).get_string().get(s) != simdjson::SUCCESS) fail(key, "must be a string");
    return std::string(s);
  }
  std::string str_or_empty(object o, std::string_view key) const { return has(o, key) ? str(o, key) : std::string(); }
  int64_t i64(object o, std::string_view key) const {
    int64_t i = 0;
    element v = member(o, key);
    if (v.get_int64().get(i) == simdjson::SUCCESS) return i;
    uint64_t u = 0;
    if (v.get_uint64().get(u) == simdjson::SUCCESS) return static_cast<int64_t>(u);
    fail(key, "must be an integer");
  }
  double num(object o, std::string_view key) const {
    double d = 0;
    element v = member(o, key);
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();  // the writer's non-finite
    if (v.get_double().get(d) != simdjson::SUCCESS) fail(key, "must be a number");
    return d;
  }
  bool boolean(object o, std::string_view key) const {
    bool b = false;
    if (member(o, key).get_bool().get(b) != simdjson::SUCCESS) fail(key, "must be true or false");
    return b;
  }

 private:
  std::string where_;
};

Severity severity_of(const Reader& rd, const std::string& s) {
  for (Severity v : {Severity::info, Severity::warning, Severity::error})
    if (s == severity_name(v)) return v;
  rd.fail("severity", fmt::format("unknown severity \"{}\"", s));
}

Saving read_saving(const Reader& rd, object o) {
  Saving s;
  s.id = rd.str(o, "id");
  s.fix = rd.str(o, "fix");
  s.saved_per_step = rd.i64(o, "saved_per_step_ns");
  s.step_share = rd.num(o, "step_share");
  s.model = rd.str(o, "model");
  if (rd.has(o, "per_step")) s.per_step = rd.boolean(o, "per_step");
  if (rd.has(o, "bound_ns")) s.bound = rd.i64(o, "bound_ns");
  return s;
}

Finding read_finding(const Reader& rd, object o) {
  Finding f;
  f.id = rd.str(o, "id");
  f.name = rd.str(o, "name");
  f.severity = severity_of(rd, rd.str(o, "severity"));
  f.confidence = rd.num(o, "confidence");
  f.source = rd.str(o, "source");
  f.begin = rd.i64(o, "begin_ns");
  f.end = rd.i64(o, "end_ns");
  f.cost = rd.i64(o, "cost_ns");
  for (element e : rd.arr(o, "evidence")) {
    std::string_view s;
    if (e.get_string().get(s) != simdjson::SUCCESS) rd.fail("evidence", "must hold strings");
    f.evidence.emplace_back(s);
  }
  f.fix = rd.str(o, "fix");
  f.explanation = rd.str_or_empty(o, "explanation");
  if (rd.has(o, "saving")) f.saving = read_saving(rd, rd.obj(rd.member(o, "saving"), "saving"));
  for (element e : rd.arr(o, "locations")) {
    const object l = rd.obj(e, "locations");
    f.locations.push_back({rd.str(l, "file"), static_cast<int>(rd.i64(l, "line")), rd.str(l, "function")});
  }
  f.origin = rd.str_or_empty(o, "origin");
  f.one_time = rd.has(o, "one_time") && rd.boolean(o, "one_time");  // absent before this field
  return f;
}

std::vector<std::string> strings(const Reader& rd, object o, std::string_view key) {
  std::vector<std::string> out;
  for (element e : rd.arr(o, key)) {
    std::string_view s;
    if (e.get_string().get(s) != simdjson::SUCCESS) rd.fail(key, "must hold strings");
    out.emplace_back(s);
  }
  return out;
}

BaselineState baseline_state_of(const Reader& rd, const std::string& s) {
  if (s.empty()) return BaselineState::none;
  for (BaselineState b : {BaselineState::added, BaselineState::unchanged, BaselineState::worse, BaselineState::better, BaselineState::fixed})
    if (s == baseline_state_name(b)) return b;
  rd.fail("baseline_state", fmt::format("unknown state \"{}\"", s));
}

// A grouped finding (ttap.analyze/2).
GroupedFinding read_group(const Reader& rd, object o) {
  GroupedFinding g;
  g.id = rd.str(o, "id");
  g.name = rd.str(o, "name");
  g.origin = rd.str(o, "origin");
  g.severity = severity_of(rd, rd.str(o, "severity"));
  g.confidence = rd.num(o, "confidence");
  g.source = rd.str(o, "source");
  g.occurrence_count = static_cast<size_t>(rd.i64(o, "occurrence_count"));
  for (element e : rd.arr(o, "occurrences")) {
    const object x = rd.obj(e, "occurrences");
    g.occurrences.push_back({rd.i64(x, "begin_ns"), rd.i64(x, "end_ns"), rd.has(x, "step") ? rd.i64(x, "step") : -1,
                             rd.has(x, "window") ? rd.i64(x, "window") : -1});
  }
  for (element e : rd.arr(o, "steps")) {
    int64_t n = 0;
    if (e.get_int64().get(n) != simdjson::SUCCESS) rd.fail("steps", "must hold integers");
    g.steps.push_back(n);
  }
  for (element e : rd.arr(o, "windows")) {
    int64_t n = 0;
    if (e.get_int64().get(n) != simdjson::SUCCESS || n < 0) rd.fail("windows", "must hold window indices");
    g.windows.push_back(static_cast<uint32_t>(n));
  }
  g.steady_state = rd.boolean(o, "steady_state");
  g.one_time = rd.has(o, "one_time") && rd.boolean(o, "one_time");  // absent in older reports
  g.cost = rd.i64(o, "cost_ns");
  if (rd.has(o, "cost_per_step_ns")) g.cost_per_step = rd.i64(o, "cost_per_step_ns");
  g.share = rd.num(o, "share");
  if (rd.has(o, "saving")) g.saving = read_saving(rd, rd.obj(rd.member(o, "saving"), "saving"));
  g.rank_share = rd.num(o, "rank_share");
  if (rd.has(o, "severity_share")) g.severity_share = rd.num(o, "severity_share");
  if (rd.has(o, "severity_windows_share")) g.severity_windows_share = rd.num(o, "severity_windows_share");
  g.evidence = strings(rd, o, "evidence");
  g.fix = rd.str(o, "fix");
  g.explanation = rd.str_or_empty(o, "explanation");
  for (element e : rd.arr(o, "locations")) {
    const object l = rd.obj(e, "locations");
    g.locations.push_back({rd.str(l, "file"), static_cast<int>(rd.i64(l, "line")), rd.str(l, "function")});
  }
  g.baseline = baseline_state_of(rd, rd.str_or_empty(o, "baseline_state"));
  if (rd.has(o, "baseline_cost_per_step_ns")) g.baseline_cost_per_step = rd.i64(o, "baseline_cost_per_step_ns");
  if (rd.has(o, "baseline_share")) g.baseline_share = rd.num(o, "baseline_share");
  return g;
}

Headline read_headline(const Reader& rd, object o) {
  Headline h;
  for (element e : rd.arr(o, "gpus")) {
    const object g = rd.obj(e, "gpus");
    h.gpus.push_back({static_cast<int32_t>(rd.i64(g, "device")), rd.i64(g, "total_ns"), rd.i64(g, "busy_ns"), rd.i64(g, "idle_ns"),
                      rd.i64(g, "computation_ns"), rd.i64(g, "exposed_communication_ns"), rd.i64(g, "exposed_memcpy_ns"),
                      rd.str_or_empty(g, "scope")});
  }
  for (element e : rd.arr(o, "categories")) {
    const object c = rd.obj(e, "categories");
    h.categories.push_back({rd.str(c, "category"), rd.num(c, "share")});
  }
  if (rd.has(o, "steps")) {
    const object s = rd.obj(rd.member(o, "steps"), "steps");
    h.steps = rd.i64(s, "count");
    h.step_mean = rd.i64(s, "mean_ns");
    h.step_gpu_busy = rd.num(s, "gpu_busy_share");
    h.step_dataloader = rd.num(s, "dataloader_share");
  }
  if (rd.has(o, "launches")) {
    const object l = rd.obj(rd.member(o, "launches"), "launches");
    h.launches = rd.i64(l, "count");
    h.short_kernel_share = rd.num(l, "short_kernel_share");
    h.launch_delay_p50 = rd.i64(l, "delay_p50_ns");
    h.launch_delay_p95 = rd.i64(l, "delay_p95_ns");
  }
  if (rd.has(o, "recoverable")) h.recoverable = read_saving(rd, rd.obj(rd.member(o, "recoverable"), "recoverable"));
  if (rd.has(o, "python_functions")) h.python_functions = rd.i64(o, "python_functions");  // reports before it: 0
  if (rd.has(o, "python_tracer")) {  // null without the estimate, absent in reports before it
    const object p = rd.obj(rd.member(o, "python_tracer"), "python_tracer");
    h.python_tracer_per_step = rd.i64(p, "per_step_ns");
    h.python_tracer_per_event = rd.i64(p, "per_event_ns");
    h.python_functions_per_step = rd.i64(p, "events_per_step");
    h.python_tracer_calls_timed = rd.i64(p, "calls_timed");
  }
  return h;
}

TraceReport read_trace(const Reader& rd, object o) {
  TraceReport t;
  t.path = rd.str(o, "path");
  t.content_hash = rd.str_or_empty(o, "content_hash");
  t.seconds = rd.has(o, "seconds") ? rd.num(o, "seconds") : 0;
  const std::string verdict = rd.str(o, "verdict");
  if (verdict == "error") {
    t.verdict = Verdict::error;
    t.gate_failed = true;
    t.error = rd.str(o, "error");
    t.internal_error = rd.has(o, "internal_error") && rd.boolean(o, "internal_error");
    return t;
  }
  if (verdict != "clean" && verdict != "flagged") rd.fail("verdict", fmt::format("unknown verdict \"{}\"", verdict));
  t.verdict = verdict == "clean" ? Verdict::clean : Verdict::flagged;
  t.gate_failed = rd.boolean(o, "gate_failed");
  t.scorer = rd.str_or_empty(o, "scorer");
  t.score = t.scorer.empty() ? 0 : rd.num(o, "score");
  t.device = rd.str_or_empty(o, "device");
  const object ss = rd.obj(rd.member(o, "steady_state"), "steady_state");
  t.steady_state = rd.str(ss, "source");
  t.begin = rd.i64(ss, "begin_ns");
  t.end = rd.i64(ss, "end_ns");
  // Reports from before trace_start_ns counted their times from the steady state's start.
  t.origin = rd.has(ss, "trace_start_ns") ? rd.i64(ss, "trace_start_ns") : t.begin;
  t.headline = read_headline(rd, rd.obj(rd.member(o, "headline"), "headline"));
  for (element e : rd.arr(o, "savings")) t.savings.push_back(read_saving(rd, rd.obj(e, "savings")));
  if (rd.has(o, "findings"))  // ttap.analyze/2
    for (element e : rd.arr(o, "findings")) t.findings.push_back(read_group(rd, rd.obj(e, "findings")));
  if (rd.has(o, "recoverable_share")) t.recoverable_share = rd.num(o, "recoverable_share");
  if (rd.has(o, "baseline")) {
    const object b = rd.obj(rd.member(o, "baseline"), "baseline");
    t.baseline = rd.str(b, "trace");
    for (element e : rd.arr(b, "fixed_findings")) t.fixed.push_back(read_group(rd, rd.obj(e, "fixed_findings")));
    if (rd.has(b, "still_present_findings"))
      for (element e : rd.arr(b, "still_present_findings")) t.still_present.push_back(read_group(rd, rd.obj(e, "still_present_findings")));
  }
  for (element e : rd.arr(o, "windows")) {
    const object w = rd.obj(e, "windows");
    t.windows.push_back({static_cast<uint32_t>(rd.i64(w, "index")), rd.i64(w, "begin_ns"), rd.i64(w, "end_ns"), rd.num(w, "score"),
                         rd.num(w, "gpu_busy"), rd.boolean(w, "flagged")});
  }
  for (element e : rd.arr(o, "flagged_windows")) {
    const object w = rd.obj(e, "flagged_windows");
    FlaggedWindow f;
    f.steady_state = rd.str(w, "scope") == "steady_state";
    f.index = f.steady_state ? 0 : static_cast<uint32_t>(rd.i64(w, "index"));
    f.begin = rd.i64(w, "begin_ns");
    f.end = rd.i64(w, "end_ns");
    f.score = rd.num(w, "score");
    for (element x : rd.arr(w, "findings")) f.findings.push_back(read_finding(rd, rd.obj(x, "findings")));
    t.flagged.push_back(std::move(f));
  }
  t.suppressed = static_cast<uint32_t>(rd.i64(o, "suppressed"));
  for (element e : rd.arr(o, "warnings")) {
    std::string_view s;
    if (e.get_string().get(s) != simdjson::SUCCESS) rd.fail("warnings", "must hold strings");
    t.warnings.emplace_back(s);
  }
  return t;
}

Report read_report(element doc, const std::string& where) {
  const Reader rd(where);
  const object o = rd.obj(doc, "report");
  const std::string schema = rd.str(o, "schema");
  if (schema != "ttap.analyze/2" && schema != "ttap.analyze/1")
    rd.fail("schema", fmt::format("\"{}\" is not a ttap analyze report (ttap.analyze/2 or /1)", schema));
  Report r;
  r.tool_version = rd.str(rd.obj(rd.member(o, "tool"), "tool"), "version");
  const object s = rd.obj(rd.member(o, "settings"), "settings");
  r.settings.windows = static_cast<int>(rd.i64(s, "windows"));
  r.settings.top_k = static_cast<int>(rd.i64(s, "top_k"));
  if (rd.has(s, "flag_spacing")) r.settings.flag_spacing = static_cast<int>(rd.i64(s, "flag_spacing"));
  r.settings.scorer = rd.str(s, "scorer");
  r.settings.fail_on = rd.str(s, "fail_on");
  if (rd.has(s, "fail_score")) r.settings.fail_score = rd.num(s, "fail_score");
  if (rd.has(s, "fail_savings")) r.settings.fail_savings = rd.num(s, "fail_savings");
  r.settings.baseline = rd.str_or_empty(s, "baseline");
  if (rd.has(s, "regress")) r.settings.regress = rd.num(s, "regress");
  r.settings.llm = rd.boolean(s, "llm");
  r.settings.config = rd.str_or_empty(s, "config");
  for (element e : rd.arr(o, "warnings")) {
    std::string_view w;
    if (e.get_string().get(w) != simdjson::SUCCESS) rd.fail("warnings", "must hold strings");
    r.warnings.emplace_back(w);
  }
  for (element e : rd.arr(o, "traces")) r.traces.push_back(read_trace(rd, rd.obj(e, "traces")));
  return r;
}

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

}  // namespace

ReadReports read_analyze_reports(std::string_view text, const std::string& source) {
  ReadReports out;
  if (blank(text)) return out;  // an empty shard: no traces, nothing wrong
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  // One document (the JSON report, pretty-printed or not) ...
  if (parser.parse(text.data(), text.size()).get(doc) == simdjson::SUCCESS) {
    out.reports.push_back(read_report(doc, source));
    return out;
  }
  // ... or one per line (JSONL). A line that fails to parse is a problem, not the end:
  // a killed run leaves at most its last line cut short.
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (blank(line)) continue;
    const std::string where = fmt::format("{} line {}", source, line_no);
    if (parser.parse(line.data(), line.size()).get(doc) != simdjson::SUCCESS) {
      out.problems.push_back(fmt::format("{}: not a whole JSON line (cut short by a killed run?), skipped", where));
      continue;
    }
    out.reports.push_back(read_report(doc, where));
  }
  if (out.reports.empty()) throw InputError(source, "neither a ttap analyze JSON report nor JSONL lines of them");
  return out;
}

}  // namespace ttap
