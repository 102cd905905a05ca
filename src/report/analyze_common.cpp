#include "analyze_common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <map>

#include "../llm/text_format.hpp"

namespace ttap {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::clean: return "clean";
    case Verdict::flagged: return "flagged";
    case Verdict::error: return "error";
  }
  return "error";
}

std::string_view baseline_state_name(BaselineState s) {
  switch (s) {
    case BaselineState::none: return "";
    case BaselineState::added: return "new";
    case BaselineState::unchanged: return "unchanged";
    case BaselineState::worse: return "worse";
    case BaselineState::better: return "better";
    case BaselineState::fixed: return "fixed";
  }
  return "";
}

std::string flagged_label(const FlaggedWindow& w) {
  return w.steady_state ? std::string("steady state") : fmt::format("window {}", w.index);
}

namespace {
double pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0; }

// Which span a GPU line's figures are of, so that it never seems to contradict the steps line.
std::string_view gpu_scope_text(std::string_view scope) {
  if (scope == "steps") return "of steps";
  if (scope == "gpu_step_annotations") return "of GPU-side step annotations";
  return "from first to last GPU activity";
}
}  // namespace

std::vector<std::string> headline_lines(const TraceReport& t) {
  // The same lines `ttap analyze` printed before the detector existed; scripts read them.
  const Headline& h = t.headline;
  std::vector<std::string> out;
  if (h.gpus.empty()) out.push_back("no GPU activity (CPU-only trace)");
  for (const auto& g : h.gpus)
    out.push_back(fmt::format("GPU {}: busy {:.1f}% of {} {} (compute {:.1f}%, exposed comm {:.1f}%, exposed memcpy {:.1f}%), idle {}",
                              g.device, pct(g.busy, g.total), analyze_render::human_duration(g.total), gpu_scope_text(g.scope),
                              pct(g.computation, g.total),
                              pct(g.exposed_communication, g.total), pct(g.exposed_memcpy, g.total),
                              analyze_render::human_duration(g.idle)));
  if (!h.categories.empty()) {
    std::string line = "GPU time by category: ";
    for (size_t i = 0; i < h.categories.size(); ++i)
      line += fmt::format("{}{} {:.1f}%", i ? ", " : "", h.categories[i].category, 100.0 * h.categories[i].share);
    out.push_back(line);
  }
  if (h.steps > 0)
    out.push_back(fmt::format("{}, mean {}: GPU busy {:.1f}%, DataLoader {:.1f}% of step time", count_text(h.steps, "step"),
                              analyze_render::human_duration(h.step_mean), 100.0 * h.step_gpu_busy, 100.0 * h.step_dataloader));
  if (h.launches > 0)
    out.push_back(fmt::format("{} launches: {:.1f}% of kernels shorter than their launch call; launch delay p50 {}, p95 {}",
                              h.launches, 100.0 * h.short_kernel_share, analyze_render::human_duration(h.launch_delay_p50),
                              analyze_render::human_duration(h.launch_delay_p95)));
  // Python stacks cost host time: the tracer hooks every Python call, so the host-side
  // findings read larger than the same job without it. Said once, before any figure built on it.
  // With steps, how much at least: the tracer's own time, from the trace's own calls
  // (Headline::python_tracer_per_step).
  if (h.python_functions > 0) {
    std::string line = fmt::format("note: recorded with Python stacks ({} python_function events, torch.profiler.profile(with_stack=True)): "
                                   "the Python tracer slows the host, so host-side times (CPU-bound stretches, launch gaps, GPU idle while "
                                   "the main thread runs Python, and their what-ifs) read larger than in a run profiled without it",
                                   h.python_functions);
    if (h.python_tracer_per_step > 0)
      line += fmt::format("; its own time is at least ~{} per step ({:.1f}% of step time): {} python_function events per step x {}, "
                          "the median recorded time of the {} built-in calls that run nothing else, a floor of what the tracer adds to a call",
                          analyze_render::human_duration(h.python_tracer_per_step), pct(h.python_tracer_per_step, h.step_mean),
                          h.python_functions_per_step, analyze_render::human_duration(h.python_tracer_per_event),
                          h.python_tracer_calls_timed);
    out.push_back(line);
  }
  // One total is shown, under the findings (TraceReport::recoverable_share, which counts the
  // findings without a what-if too); the what-ifs' own capped sum stays in JSON only.
  for (const Saving& s : t.savings) {
    if (s.step_share < 0.01) continue;  // below 1% of a step is noise next to run-to-run variation
    // An id whose every finding is one-time capture work saves no step time, as its findings
    // say: xDiT's host_sync (its syncs inside the CUDA graph recording) read "would save
    // ~12.1 ms" above "one-time ..., not counted in recoverable".
    const bool has = std::any_of(t.findings.begin(), t.findings.end(), [&](const GroupedFinding& g) { return g.id == s.id; });
    const bool one_time = std::all_of(t.findings.begin(), t.findings.end(),
                                      [&](const GroupedFinding& g) { return g.id != s.id || g.one_time; });
    if (has && one_time) continue;
    out.push_back(fmt::format("what-if {}: {} would save {}", s.id, s.fix, analyze_render::saving_text(s)));
  }
  return out;
}

namespace analyze_render {

// Durations people read (costs, spans) in human units; positions stay "+x.xxx ms" (offset_ms).
std::string ms(int64_t ns) { return human_duration(ns); }

std::string offset_ms(const TraceReport& t, int64_t ns) {
  return llm::offset_text(ns, t.origin);  // the LLM prompt's own wording of a time
}

std::string location_text(const CodeLocation& l) {
  std::string s = l.line > 0 ? fmt::format("{}:{}", l.file, l.line) : l.file;
  if (!l.function.empty()) s += fmt::format(" ({})", l.function);
  return s;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // XML 1.0 allows no control characters but tab, newline and carriage return.
        if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') out += ' ';
        else out += static_cast<char>(ch);
    }
  }
  return out;
}

std::string saving_text(const Saving& s) {
  return fmt::format("~{} {} ({:.1f}%)", human_duration(s.saved_per_step), s.per_step ? "per step" : "over the profiled span",
                     100.0 * s.step_share);
}

std::string steady_state_text(std::string_view source) {
  // As the GPU headline line words its own span: "100 windows over 987 ms of gpu" read as jargon.
  if (source == "steps") return "of steps";
  if (source == "gpu") return "from first to last GPU activity";
  if (source == "cpu") return "of CPU activity";
  return fmt::format("of {}", source);
}

size_t finding_count(const TraceReport& t) { return t.findings.size(); }

namespace {

// "3-8", "1, 3, 5-7": consecutive step numbers as ranges.
std::string number_ranges(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    out += fmt::format("{}{}", out.empty() ? "" : ", ", j > i ? fmt::format("{}-{}", v[i], v[j]) : std::to_string(v[i]));
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string occurrences_text(const GroupedFinding& g) {
  std::string out = count_text(g.occurrence_count, "occurrence");
  if (!g.steps.empty()) out += fmt::format(" in step{} {}", g.steps.size() == 1 ? "" : "s", number_ranges(g.steps));
  return out;
}

std::string group_cost_text(const GroupedFinding& g) {
  // One-time work says so wherever its cost is shown, so no reader takes it for the step's.
  std::string note = g.one_time ? fmt::format("; {}", kOneTimeText) : "";
  const char* of = g.cost_per_step ? "step time" : "the steady state";
  if (g.severity_share && g.severity_windows_share)
    note += fmt::format("; {}: {} costs {:.1f}% of {} summed over all windows, each judged alone ({:.1f}% in its groups "
                        "here)",
                        severity_name(g.severity), g.id, 100.0 * *g.severity_share, of, 100.0 * *g.severity_windows_share);
  else if (g.severity_share)
    note += fmt::format("; {}: {} costs {:.1f}% of {} across the trace", severity_name(g.severity), g.id,
                        100.0 * *g.severity_share, of);
  if (g.cost_per_step) return fmt::format("~{} per step ({:.1f}% of step time){}", ms(*g.cost_per_step), 100.0 * g.share, note);
  return fmt::format("{} ({:.1f}% of the steady state){}", ms(g.cost), 100.0 * g.share, note);
}

std::string baseline_cost_text(const GroupedFinding& g) {
  if (g.baseline_cost_per_step && g.baseline_share)
    return fmt::format("~{} per step ({:.1f}% of step time)", ms(*g.baseline_cost_per_step), 100.0 * *g.baseline_share);
  return g.baseline_share ? fmt::format("{:.1f}% of the steady state", 100.0 * *g.baseline_share) : std::string("?");
}

std::vector<std::string> occurrence_ranges(const TraceReport& t, const GroupedFinding& g) {
  std::vector<std::string> out;
  for (const Occurrence& o : g.occurrences) out.push_back(fmt::format("{} .. {}", offset_ms(t, o.begin), offset_ms(t, o.end)));
  return out;
}

bool is_new_or_worse(const GroupedFinding& g) { return g.baseline == BaselineState::added || g.baseline == BaselineState::worse; }

size_t count_state(const std::vector<GroupedFinding>& groups, BaselineState state) {
  return static_cast<size_t>(std::count_if(groups.begin(), groups.end(), [&](const GroupedFinding& g) { return g.baseline == state; }));
}

std::string baseline_counts_text(const TraceReport& t) {
  std::string below;
  // The baseline's findings still here below the report's listed findings: not fixed, and
  // not listed findings either (they do not fail the gate), so counted apart.
  if (!t.still_present.empty())
    below = fmt::format("; still here below this report's findings: {} worse, {} better, {} unchanged",
                        count_state(t.still_present, BaselineState::worse), count_state(t.still_present, BaselineState::better),
                        count_state(t.still_present, BaselineState::unchanged));
  return fmt::format("{} new, {} worse, {} better, {} unchanged, {} fixed{}", count_state(t.findings, BaselineState::added),
                     count_state(t.findings, BaselineState::worse), count_state(t.findings, BaselineState::better),
                     count_state(t.findings, BaselineState::unchanged), t.fixed.size(), below);
}

std::string recoverable_text(const TraceReport& t) {
  return fmt::format("Fixing every finding would recover ~{:.1f}% of {}.", 100.0 * t.recoverable_share,
                     t.headline.steps > 0 ? "step time" : "the steady state");
}

std::vector<std::string> finding_ids(const TraceReport& t) {
  std::vector<std::string> ids;  // the grouped findings are ranked already
  for (const GroupedFinding& g : t.findings)
    if (std::find(ids.begin(), ids.end(), g.id) == ids.end()) ids.push_back(g.id);
  return ids;
}

Counts count(const Report& r) {
  Counts c;
  for (const auto& t : r.traces) {
    if (t.verdict == Verdict::clean) ++c.clean;
    else if (t.verdict == Verdict::flagged) ++c.flagged;
    else ++c.errors;
    if (t.gate_failed) ++c.gate_failed;
    c.findings += finding_count(t);
    for (const auto& w : t.flagged) c.window_findings += w.findings.size();
    c.added += count_state(t.findings, BaselineState::added);
    c.worse += count_state(t.findings, BaselineState::worse);
    c.better += count_state(t.findings, BaselineState::better);
    c.unchanged += count_state(t.findings, BaselineState::unchanged);
    c.still_present += t.still_present.size();
    c.fixed += t.fixed.size();
  }
  return c;
}

}  // namespace analyze_render
}  // namespace ttap
