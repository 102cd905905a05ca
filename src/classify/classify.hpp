// The analyze pipeline for one trace: headline -> windows -> scores -> the top-k windows
// -> rule detectors (and the LLM when configured) -> findings with what-if savings and
// user code locations -> the rules across the whole steady state, for costly ids no window
// reported -> ignores -> verdict and CI gate. Fills a TraceReport.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ttap/llm.hpp"
#include "ttap/report.hpp"
#include "ttap/scoring.hpp"
#include "ttap/tree.hpp"

namespace ttap {

// A config-file ignore (see README, "Config file"). Empty fields match anything; an entry
// needs at least one non-empty field. Patterns are shell globs (fnmatch, `*` crosses '/').
struct Ignore {
  std::string id;     // catalog id
  std::string file;   // glob against the finding's user-code file (a finding without one never matches)
  std::string trace;  // glob against the trace path
  std::string reason; // for people; echoed nowhere else
};

// Severity by the share of the steady state (the steps, or the profiled span without them)
// a pattern costs across the trace: severity_for_share (ttap/rules.hpp).

enum class FailOn : uint8_t { none, warning, error };
std::optional<FailOn> parse_fail_on(std::string_view s);
std::string_view fail_on_name(FailOn f);

struct AnalyzeSettings {
  int windows = 100;
  int top_k = 5;
  int flag_spacing = kFlagSpacing;  // flagged windows at least this many windows apart (flag_windows)
  ScoreOptions score;
  LlmConfig llm;
  std::vector<Ignore> ignores;
  FailOn fail_on = FailOn::warning;  // exit 1 on a flagged trace, as the exit codes document
  std::optional<double> fail_score;
  std::optional<double> fail_savings;  // percent of step time (--fail-savings)
  bool timeline = false;  // build the steady state's lanes for the HTML report's timeline
};

// The headline figures and what-if savings (everything that needs no detector).
Headline make_headline(const Trace& trace, const EventTree& tree);
std::vector<Saving> make_savings(const Trace& trace, const EventTree& tree);
// Every estimate together, or nothing for fewer than two: their sum (they overlap, so an
// upper bound) capped by the step time beyond all of its GPU work, or by the largest
// estimate where that one alone is more (overlapping collectives shortens the GPU work).
std::optional<Saving> recoverable(const std::vector<Saving>& savings);
// The pinned-copy what-if without the copies that the rules across the steady state find
// going out and back (offload_pingpong): their fix is not to make them, and the headline
// offered "pin host memory" for gpuzoo_0019's 9.0 MB round trips beside that finding.
void leave_round_trips_unpinned(std::vector<Saving>& savings, const std::vector<RuleFinding>& across,
                                const Trace& trace, const EventTree& tree);

// Share of [begin, end) covered by any GPU activity, per range (ranges sorted by begin).
std::vector<double> gpu_busy_shares(const Trace& trace, const EventTree& tree,
                                    const std::vector<std::pair<int64_t, int64_t>>& ranges);

// The user's code above `events`: for each event, the innermost python_function frame on
// its path to the root whose file is not library code (site-packages, torch/, the standard
// library). Distinct locations, in the order of the events, at most `limit`.
std::vector<CodeLocation> user_code_locations(const Trace& trace, const EventTree& tree,
                                              const std::vector<EventId>& events, size_t limit = 3);

// A rule finding as reported in the range [begin, end) (a window, or the steady state):
// the catalog's name, the trace's what-if saving for the same id, user code locations from
// the Python frames above its events when the detector gave none, and its cost cut to the
// part inside the range (see clip_cost_to_range).
Finding to_finding(const RuleFinding& rule, const Trace& trace, const EventTree& tree,
                   const std::vector<Saving>& savings, int64_t begin, int64_t end);
// The same with the finding's origin given, for a caller that has its origin_times already.
Finding to_finding(const RuleFinding& rule, const Trace& trace, const EventTree& tree,
                   const std::vector<Saving>& savings, int64_t begin, int64_t end, std::string origin);

// A rule may judge a pattern by its whole length (a 560 ms cudaFree that starts in a 129 ms
// window), but what a finding costs "here" is what lies inside its range: never more than
// the range, and, for a cost the rule counted beyond the range, no more than the overlap of
// the pattern's span with it. The whole figure moves to the evidence.
void clip_cost_to_range(Finding& f, int64_t begin, int64_t end);

// One severity per id per trace, from the share of the steady state (the steps, or the
// profiled span without them) that the whole pattern costs: the largest of its cost across
// the steady state (`steady`, the rules run over all of it), the sum of its costs in the
// flagged windows or in every window (`over_windows`), and its what-if saving (a share of a
// step, the same share of the steady state); error from kErrorShare, warning from
// kWarningShare, else info. An id only the LLM names, with no cost measured anywhere, is
// info; so is one-time capture work (one_time), whose cost counts toward no id's severity.
// So a pattern is not an error in one window and information in the next, and neither a
// window's length nor how many windows are flagged decides it. Each window's info findings
// then move behind its warnings and errors.
void assign_trace_severity(TraceReport& r, const std::vector<RuleFinding>& steady,
                           const std::map<std::string, int64_t>& over_windows = {});

// Folds an LLM verdict on one window into that window's rule findings: ids both name
// become "rules+llm" with the LLM's explanation; ids only the LLM names are added (source
// "llm", the catalog's fix unless the LLM gave one); rule findings the LLM did not confirm
// stay, marked in their evidence. A failed verdict changes nothing. Unknown ids are dropped.
void merge_llm_verdict(std::vector<Finding>& findings, const LlmVerdict& verdict,
                       const std::vector<Saving>& savings);

// Whether `ignore` suppresses finding `f` of the trace at `trace_path`.
bool ignore_matches(const Ignore& ignore, const std::string& trace_path, const Finding& f);
// Whether any of `ignores` suppresses it.
bool ignored(const std::vector<Ignore>& ignores, const std::string& trace_path, const Finding& f);
// Drops suppressed findings (counting them in trace.suppressed) and flagged windows left
// without findings.
void apply_ignores(TraceReport& trace, const std::vector<Ignore>& ignores);

// What owns a finding (Finding::origin): for GPU work the op that launched it, for a
// runtime call the op that made it, else the event's own name (an op, an annotation such
// as the DataLoader's __next__); a finding without events, its first user file:line.
std::string event_origin(const Trace& trace, const EventTree& tree, EventId e);
std::string finding_origin(const RuleFinding& rule, const Trace& trace, const EventTree& tree);
// Each origin (event_origin) of a finding's events with the time its events there hold;
// finding_origin is the one holding the most.
std::map<std::string, int64_t> origin_times(const RuleFinding& rule, const Trace& trace, const EventTree& tree);
// finding_origin from the finding's origin_times, `owned`.
std::string main_origin(const RuleFinding& rule, const std::map<std::string, int64_t>& owned);

// Each id's cost summed over every window (one figure per id per window, the part inside
// it), and where it showed in them: an id's whole extent where the rules across the steady
// state do not fire for it.
struct WindowsExtent {
  std::map<std::string, int64_t> cost;
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> spans;
};

// Fills trace.findings and trace.recoverable_share from trace.flagged (grouping.cpp).
// `across`: the rule detectors' findings over the whole steady state, every severity,
// which give each problem its extent (occurrences, steps, cost per step); `windows`, for an
// id they do not name, its extent over every window, counted once.
void group_findings(TraceReport& trace, const std::vector<RuleFinding>& across, const Trace& tr, const EventTree& tree,
                    const WindowsExtent& windows = {});

// On a trace recorded with Python stacks, a line on each host-side finding (gpu_idle,
// launch_bound, cpu_bound_step) saying how much of its cost per step the Python tracer's
// own time may be: the entries and exits of python_function calls inside its cost_spans, on
// the threads that launch GPU work, times half Headline::python_tracer_per_event each
// (python_tracer_note.cpp).
// Severity and the gate keep the full cost (why: python_tracer_note.cpp).
void note_python_tracer(TraceReport& trace, const Trace& tr, const EventTree& tree);

// A group of findings that share `f`'s id, origin and one-time flag: its name, severity and
// source from `f`, nothing counted yet.
GroupedFinding group_of(const Finding& f);

// A grouped finding's cost per step and share (of step time; of the steady state without
// steps) from its cost across the steady state, capped at the steady state.
void set_cost_share(GroupedFinding& g, const Headline& h, int64_t span);

// Fills every finding of the run, listed or not (TraceReport::present, presence.cpp): one per
// rule finding across the steady state at every severity, and one per id that only some
// window shows (`over_windows`, its cost summed over them); and each rule finding again
// under every other origin its events lie in (TraceReport::present_elsewhere). The config's
// ignores applied.
void set_present_findings(TraceReport& r, const std::vector<RuleFinding>& across, const std::map<std::string, int64_t>& over_windows,
                          const std::vector<Ignore>& ignores, const Trace& trace, const EventTree& tree);

// Compares a trace's grouped findings with the baseline's (baseline.cpp): matched by id
// and origin, then what is left by id alone (an origin can move between two recordings of
// the same problem); each new, unchanged, worse or better (cost per step, or share of the
// steady state without steps, up or down by more than regress_pct percent) or fixed (in
// trace.fixed).
// A baseline finding left without a match is fixed only when the run no longer has it at
// all (trace.present): one the run still has below its report's findings, of the same
// origin, or of the same id where the report lists none of that id, or inside a finding of
// that id named after another op (trace.present_elsewhere), is unchanged, worse or better
// (in trace.still_present).
void compare_with_baseline(TraceReport& trace, const TraceReport& baseline, double regress_pct);

// Baselines read back from an earlier `--format json` report (baseline_report.cpp).
// Whether the bytes are such a report (else --baseline names a trace).
bool looks_like_analyze_report(std::string_view bytes);
// Per trace its path and grouped findings; with `settings`, each report's settings too.
// Throws InputError naming `source` for bad JSON or a report without grouped findings
// (schema ttap.analyze/1).
std::vector<TraceReport> read_baseline_report(const std::string& source, std::string_view bytes,
                                              std::vector<ReportSettings>* settings = nullptr);
// The baseline trace for `path`: the same path, else the same file name, else the only
// trace of a one-trace baseline; nullptr when none fits.
const TraceReport* baseline_for(const std::vector<TraceReport>& base, const std::string& path);

// Sets verdict (flagged: a finding of severity warning or above, or the score at or above
// fail_score) and gate_failed (a finding at or above fail_on, or the score at or above
// fail_score, or the recoverable share at or above fail_savings percent). A finding only
// the LLM names (source "llm": no rule evidence, no measured cost) is reported but neither
// flags the trace nor fails the gate by itself; nor does one-time capture work (one_time). With a baseline (trace.baseline set), only
// new or worse grouped findings count against fail_on. Leaves error verdicts alone.
void apply_gate(TraceReport& trace, FailOn fail_on, std::optional<double> fail_score,
                std::optional<double> fail_savings = std::nullopt);

// The whole pipeline on a loaded trace. Throws InputError for bad settings (a missing
// --model) and std::runtime_error when a stage fails.
TraceReport analyze_trace(const Trace& trace, const EventTree& tree, const AnalyzeSettings& settings);

}  // namespace ttap
