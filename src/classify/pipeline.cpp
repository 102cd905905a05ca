// analyze_trace: the stages in order, each from its own header: windows (windows.hpp),
// scores (scoring.hpp), rule detectors on the top-k windows and across the steady state
// (rules.hpp), the LLM when configured (llm.hpp), then findings, ignores and the gate.
#include <algorithm>
#include <future>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include "../llm/text_format.hpp"
#include "classify.hpp"
#include "ttap/analyze.hpp"
#include "ttap/windows.hpp"

namespace ttap {

namespace {

// The rule detectors across the whole steady state catch what is spread too thin for any
// one window to show: the eager inference step whose GPU idles 80% in short gaps across a
// hundred 79 us windows, or a pattern the top-k windows happened to miss. Only findings that cost at
// least a warning's share of the steady state, or whose what-if saving is at least that
// share of a step, are kept (info-level trace-wide findings would be noise on every
// trace), and only ids no flagged window already reports.
void add_steady_state_findings(TraceReport& r, const std::vector<RuleFinding>& found, const Trace& trace,
                               const EventTree& tree) {
  FlaggedWindow whole{0, r.begin, r.end, r.score, {}, true};
  for (const RuleFinding& rf : found) {
    // Costly across the steady state, or, by the what-if replay, worth a warning's share of a
    // step to fix (host syncs whose idle no single window shows in full).
    const bool saves = std::any_of(r.savings.begin(), r.savings.end(),
                                   [&](const Saving& s) { return s.id == rf.id && s.step_share >= kWarningShare; });
    // One-time capture work is info whatever it costs; shown when it takes a warning's share
    // of the steady state, so the reader learns that much of the trace is warm-up (and left
    // out of the recoverable share), not silence.
    const bool large = static_cast<double>(rf.cost) >= kWarningShare * static_cast<double>(r.end - r.begin);
    if (rf.one_time ? !large : rf.severity < Severity::warning && !saves) continue;
    // Capture work and work outside it are reported apart: one does not stand for the other.
    const bool reported = std::any_of(r.flagged.begin(), r.flagged.end(), [&](const FlaggedWindow& w) {
      return std::any_of(w.findings.begin(), w.findings.end(),
                         [&](const Finding& f) { return f.id == rf.id && f.one_time == rf.one_time; });
    });
    if (!reported) whole.findings.push_back(to_finding(rf, trace, tree, r.savings, r.begin, r.end));
  }
  if (whole.findings.empty()) return;
  std::stable_sort(whole.findings.begin(), whole.findings.end(), named_before<Finding>);
  r.flagged.push_back(std::move(whole));
}

// Each id's cost summed over every window (one figure per id per window, the part inside
// it; one-time capture work left out): a pattern spread over more windows than the top k,
// such as a 3.4 ms launch-bound stretch over seven 0.5 ms windows, costs the trace all of
// them, and a pattern whose share of the whole steady state is too thin for the rules to
// fire over it as one range still costs what each window shows. The windows tile the
// trace, so the sum counts no time twice for one id.
// Where each id showed, window by window, goes with it (its spans, else its extent, cut to
// the window): the whole pattern's occurrences where no rule across the steady state gives
// them.
WindowsExtent costs_over_windows(const RuleEngine& rules, const std::vector<Window>& windows,
                                 const std::vector<size_t>& top, const std::vector<LlmWindow>& asked) {
  WindowsExtent total;
  for (size_t i = 0; i < windows.size(); ++i) {
    const auto known = std::find(top.begin(), top.end(), i);
    const std::vector<RuleFinding> found =
        known != top.end() ? asked[static_cast<size_t>(known - top.begin())].evidence : rules.detect(windows[i].begin, windows[i].end);
    std::map<std::string, int64_t> here;
    for (const RuleFinding& f : found) {
      if (f.one_time) continue;
      const auto [fb, fe] = cost_extent(f);
      here[f.id] = std::max(here[f.id], cost_inside(f.cost, fb, fe, windows[i].begin, windows[i].end));
      std::vector<Interval>& spans = total.spans[f.id];
      for (auto [b, e] : f.spans.empty() ? std::vector<Interval>{{fb, fe}} : f.spans)
        if (std::min(e, windows[i].end) > std::max(b, windows[i].begin))
          spans.emplace_back(std::max(b, windows[i].begin), std::min(e, windows[i].end));
    }
    for (const auto& [id, cost] : here) total.cost[id] += cost;
  }
  return total;
}

}  // namespace

TraceReport analyze_trace(const Trace& trace, const EventTree& tree, const AnalyzeSettings& settings) {
  TraceReport r;
  r.path = trace.source;
  // The what-if replays and the rule detectors' index need only the trace and its tree: on
  // other cores while the headline is made and the windows are cut.
  std::future<std::vector<Saving>> savings = std::async(std::launch::async, [&] { return make_savings(trace, tree); });
  std::future<RuleEngine> engine = std::async(std::launch::async, [&] { return RuleEngine(trace, tree); });
  r.headline = make_headline(trace, tree);

  const SteadyState steady = steady_state(trace, tree);
  r.begin = steady.begin;
  r.end = steady.end;
  r.origin = llm_trace_origin(trace);
  if (settings.timeline) r.timeline = build_report_timeline(trace, tree, steady.begin, steady.end);
  r.steady_state = steady.source;
  WindowOptions wo;
  wo.count = settings.windows;
  wo.max_events = settings.score.max_events;
  const std::vector<Window> windows = make_windows(trace, tree, wo);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const Window& w : windows) ranges.emplace_back(w.begin, w.end);
  const std::vector<double> busy = gpu_busy_shares(trace, tree, ranges);
  // Done before the windows are scored: libtorch's forward runs one OpenMP thread per core,
  // whose barriers stall when another thread holds one of those cores.
  r.savings = savings.get();
  const RuleEngine rules = engine.get();
  // Across the steady state before the windows: the what-ifs the windows' findings carry
  // must not offer a fix those findings contradict.
  std::vector<RuleFinding> across;
  if (!windows.empty()) {
    across = rules.detect(steady.begin, steady.end);
    leave_round_trips_unpinned(r.savings, across, trace, tree);
  }
  r.headline.recoverable = recoverable(r.savings);

  const TraceScores scores = score_windows(trace, tree, windows, settings.score);
  r.score = scores.trace;
  r.scorer = scores.scorer;
  r.device = scores.device;
  if (!scores.warning.empty()) r.warnings.push_back(scores.warning);
  for (size_t i = 0; i < windows.size(); ++i)
    r.windows.push_back({windows[i].index, windows[i].begin, windows[i].end, i < scores.window.size() ? scores.window[i] : 0.0,
                         busy[i], false});
  if (windows.empty()) r.warnings.push_back("no events to cut into windows: nothing to score");

  const std::vector<size_t> top = flag_windows(scores.window, static_cast<size_t>(std::max(settings.top_k, 0)),
                                                static_cast<size_t>(std::max(settings.flag_spacing, 0)), true);
  std::vector<LlmWindow> asked;
  for (size_t i : top) asked.push_back({windows[i].begin, windows[i].end, rules.detect(windows[i].begin, windows[i].end)});
  std::vector<LlmVerdict> verdicts;
  if (settings.llm.enabled() && !asked.empty()) {
    LlmClassifier llm(settings.llm);
    verdicts = llm.classify(trace, tree, rules, asked);
    size_t failed = 0;
    std::string first_error;
    // Windows the run's budget or breaker kept from being sent are the run's one warning
    // (cmd_analyze), not one per trace.
    for (const LlmVerdict& v : verdicts)
      if (!v.ok && !v.not_sent && failed++ == 0) first_error = v.error;
    // One line, not one per window: the endpoint is down or it is not.
    if (failed > 0)
      r.warnings.push_back(fmt::format("LLM unavailable for {} of {} windows ({}); those windows were classified by the rules alone",
                                       failed, verdicts.size(), first_error));
  }
  for (size_t j = 0; j < top.size(); ++j) {
    const Window& w = windows[top[j]];
    FlaggedWindow fw{w.index, w.begin, w.end, r.windows[top[j]].score, {}};
    for (const RuleFinding& rf : asked[j].evidence) fw.findings.push_back(to_finding(rf, trace, tree, r.savings, w.begin, w.end));
    if (j < verdicts.size()) merge_llm_verdict(fw.findings, verdicts[j], r.savings);
    if (fw.findings.empty()) continue;
    std::stable_sort(fw.findings.begin(), fw.findings.end(), named_before<Finding>);
    spdlog::trace("{}: window {} [{} .. {}] score {:.2f}: {} finding(s), first {}", r.path, fw.index, llm::offset_text(fw.begin, r.origin),
                  llm::offset_text(fw.end, r.origin), fw.score, fw.findings.size(), fw.findings.front().id);
    r.windows[top[j]].flagged = true;
    r.flagged.push_back(std::move(fw));
  }
  WindowsExtent over_windows;
  if (!windows.empty()) {
    add_steady_state_findings(r, across, trace, tree);
    over_windows = costs_over_windows(rules, windows, top, asked);
    assign_trace_severity(r, across, over_windows.cost);
  }
  apply_ignores(r, settings.ignores);
  group_findings(r, across, trace, tree, over_windows);
  note_python_tracer(r, trace, tree);
  set_present_findings(r, across, over_windows.cost, settings.ignores, trace, tree);
  apply_gate(r, settings.fail_on, settings.fail_score, settings.fail_savings);
  return r;
}

}  // namespace ttap
