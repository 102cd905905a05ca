// The analyze Report: what `ttap analyze` found in one or more traces, as plain data. The
// classify stage (src/classify/) fills it; the renderers declared at the end turn it into
// text, Markdown, JSON (docs/analyze-json.md), SARIF, JUnit or HTML without computing
// anything themselves. Times are nanoseconds in the trace's own time base.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ttap/report_timeline.hpp"
#include "ttap/rules.hpp"

namespace ttap {

// A what-if estimate (whatif.hpp): the step time the fix of one id would save. Without
// steps the figures are over the profiled span (per_step false), never "per step".
struct Saving {
  std::string id;
  std::string fix;
  int64_t saved_per_step = 0;  // ns, per step (or over the profiled span)
  double step_share = 0;       // of the mean step (or of the span), 0..1
  std::string model;           // how it was estimated
  bool per_step = true;
  int64_t bound = 0;           // ns: the most the step (span) could lose: its time minus its GPU busy time
  int64_t frame = 0;           // ns: the mean step (or the span)
};

// The headline figures `ttap analyze` has always printed, per trace.
struct GpuHeadline {
  int32_t device = -1;
  int64_t total = 0;  // the length of `scope`
  int64_t busy = 0;
  int64_t idle = 0;
  int64_t computation = 0;
  int64_t exposed_communication = 0;
  int64_t exposed_memcpy = 0;
  // The span `total` covers: "steps" (the CPU-side ProfilerSteps, first start to last
  // end), "gpu_step_annotations" (the GPU-side ones, without CPU steps) or "gpu_activity"
  // (first to last GPU event).
  std::string scope;
};

struct CategoryShare {
  std::string category;  // op_category_name()
  double share = 0;      // of all GPU kernel time, 0..1
};

struct Headline {
  std::vector<GpuHeadline> gpus;          // empty: a CPU-only trace
  std::vector<CategoryShare> categories;  // the largest four
  int64_t steps = 0;
  int64_t step_mean = 0;                  // ns
  double step_gpu_busy = 0;               // share of step time, 0..1
  double step_dataloader = 0;             // share of step time, 0..1
  int64_t launches = 0;
  double short_kernel_share = 0;          // kernels shorter than their launch call, 0..1
  int64_t launch_delay_p50 = 0;           // ns
  int64_t launch_delay_p95 = 0;           // ns
  // python_function events: the trace was recorded with Python stacks (torch.profiler
  // with_stack=True), whose tracer makes every host call slower than in a run without it.
  int64_t python_functions = 0;
  // The Python tracer's own host time, a floor (ttap/analyze.hpp, PythonTracerCost): set
  // when the trace has steps and enough built-in calls to time it; 0 otherwise.
  int64_t python_tracer_per_step = 0;    // ns
  int64_t python_tracer_per_event = 0;   // ns
  int64_t python_functions_per_step = 0;
  int64_t python_tracer_calls_timed = 0;
  // Every what-if fix together (id "all"): the estimates overlap, so their sum capped by
  // the step time beyond its GPU work (or the largest estimate, when that alone is more).
  // Set when two or more estimates save something.
  std::optional<Saving> recoverable;
};

struct WindowScore {
  uint32_t index = 0;
  int64_t begin = 0;
  int64_t end = 0;
  double score = 0;      // 0..1, from the scorer
  double gpu_busy = 0;   // share of the window with any GPU activity, 0..1
  bool flagged = false;  // one of the top-k windows that holds a finding
};

struct Finding {
  std::string id;        // catalog id
  std::string name;      // the catalog's one-line name
  Severity severity = Severity::warning;
  double confidence = 0;
  std::string source;    // "rules", "llm" or "rules+llm"
  int64_t begin = 0;
  int64_t end = 0;
  int64_t cost = 0;      // ns of step/GPU time it plausibly costs in its range
  std::vector<std::string> evidence;
  std::string fix;
  std::string explanation;               // the LLM's, when it judged the window
  std::optional<Saving> saving;          // the trace's what-if estimate for this id
  std::vector<CodeLocation> locations;   // user code, most telling first
  // What owns it: the op (or annotation, e.g. the DataLoader's __next__) of its most telling
  // event, else its first user file:line, else "" (the LLM named it without events).
  // Findings with the same id and origin are one problem (GroupedFinding).
  std::string origin;
  // Its cost lies in CUDA graph capture (RuleFinding::one_time): one-time warm-up work,
  // info, without a what-if saving, never gating.
  bool one_time = false;
  // The share of the steady state its id costs across the trace (the larger of its cost
  // across the steady state, in the flagged windows and in every window, or its what-if
  // saving's share of a step): what sets its severity. 0 for one-time and LLM-only findings.
  double id_share = 0;
};

struct FlaggedWindow {
  uint32_t index = 0;
  int64_t begin = 0;
  int64_t end = 0;
  double score = 0;
  std::vector<Finding> findings;  // in named_before order (rules.hpp): severity, then cost
  // The whole steady state rather than one window (index unused, score the trace's): the
  // rule detectors judged across it, for patterns spread too thin for any one window.
  bool steady_state = false;
};
// "window 3", or "steady state" for the trace-wide entry: how every renderer names it.
std::string flagged_label(const FlaggedWindow& w);

// One place a grouped finding's pattern shows: a span of the trace (merged where its
// events overlap), the profiler step and the window it starts in.
struct Occurrence {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t step = -1;    // ProfilerStep number, -1 outside steps or without them
  int64_t window = -1;  // index of the window its begin falls in, -1 outside them
};

// How a grouped finding compares with the baseline (--baseline): none without one; worse
// when its cost per step (share of the steady state without steps) rose by more than
// --regress percent, better when it fell by more than that; fixed ones are the
// baseline's, gone from this trace.
enum class BaselineState : uint8_t { none, added, unchanged, worse, better, fixed };
std::string_view baseline_state_name(BaselineState s);  // "", "new", "unchanged", "worse", "better", "fixed"

// One problem of a trace: the window and steady-state findings with one id and origin,
// folded together (src/classify/grouping.cpp), with the pattern's extent over the whole
// steady state. Severity and saving are the member findings' (the highest severity);
// the renderers show these, ranked by saving, and keep per-window detail for --details.
struct GroupedFinding {
  std::string id;
  std::string name;
  std::string origin;   // see Finding::origin
  Severity severity = Severity::warning;
  double confidence = 0;             // the highest of its members
  std::string source;                // "rules", "llm" or "rules+llm" (the most confirmed)
  // One-time work (CUDA graph capture; see Finding::one_time): its members are, and they
  // group apart from the same id and origin outside capture. Info, not in
  // recoverable_share, no saving, never failing --fail-on or the --baseline gate.
  bool one_time = false;
  size_t occurrence_count = 0;       // spans over the whole steady state (at least 1)
  std::vector<Occurrence> occurrences;  // the first few, in time order
  // Every span its cost lies in, overlaps joined (occurrences: the first few, near ones
  // joined): what a line on the finding's own time counts over. In memory only.
  std::vector<std::pair<int64_t, int64_t>> cost_spans;
  std::vector<int64_t> steps;        // ProfilerStep numbers it shows in, ascending
  std::vector<uint32_t> windows;     // the flagged windows that reported it, in report order
  bool steady_state = false;         // the rules across the whole steady state reported it
  int64_t cost = 0;                  // ns over the whole steady state
  std::optional<int64_t> cost_per_step;  // ns; only for traces with steps
  double share = 0;                  // of step time (of the steady state without steps), 0..1
  std::optional<Saving> saving;      // the what-if estimate for its id, as the members carry it
  // What ranks it: the what-if saving when there is one, else its cost (share, 0..1).
  double rank_share = 0;
  // Its id's share across the trace (Finding::id_share), set only where that, not the
  // group's own cost or saving, gives it its severity: an id's groups share one severity,
  // so a group costing 0.1% of a step can be a warning for its id's 5.8% in all.
  std::optional<double> severity_share;
  // Set when severity_share is not what the id's groups add up to but the id's cost summed
  // over every window, each judged alone (flagged or not): then this is what its groups
  // show (their union, 0..1), and the report says which figure is which.
  std::optional<double> severity_windows_share;
  std::vector<std::string> evidence;  // across the whole steady state when the rules saw it there
  std::string fix;
  std::string explanation;            // the LLM's, when it judged one of its windows
  std::vector<CodeLocation> locations;
  // Against --baseline: the state, and the baseline's cost per step and share when matched.
  BaselineState baseline = BaselineState::none;
  std::optional<int64_t> baseline_cost_per_step;
  std::optional<double> baseline_share;
};

enum class Verdict : uint8_t { clean, flagged, error };
std::string_view verdict_name(Verdict v);

struct TraceReport {
  std::string path;
  std::string content_hash;  // of the file's bytes (16 hex digits), "" when unreadable or stdin
  Verdict verdict = Verdict::clean;
  bool gate_failed = false;  // fails the CI gate (--fail-on / --fail-score / --fail-savings)
  std::string error;         // for Verdict::error: what went wrong, one line
  bool internal_error = false;  // the error is ttap's fault, not the input's (exit code 3)

  double score = 0;          // the trace score (mean of window scores)
  std::string scorer;        // "model", "rules" or "cluster"
  std::string device;        // where the model ran ("cpu"/"cuda"), "" otherwise
  int64_t begin = 0;         // the steady state that was cut into windows
  int64_t end = 0;
  // The trace's first timestamp. Every "+12.345 ms" a report prints counts from it, as the
  // LLM prompt and the -vv log do, so one window reads the same in all three.
  int64_t origin = 0;
  std::string steady_state;  // "steps", "gpu" or "cpu"

  Headline headline;
  std::vector<Saving> savings;  // every what-if estimate, largest first
  std::vector<WindowScore> windows;
  std::vector<FlaggedWindow> flagged;
  std::vector<GroupedFinding> findings;  // one per problem, by rank_share, highest first
  // The share of step time (of the steady state without steps) fixing every grouped
  // finding would recover: each id counted once, combined as 1 - prod(1 - share).
  // One-time findings (capture work) are not counted: fixing them saves no step time.
  double recoverable_share = 0;
  std::string baseline;                  // the baseline trace compared with, "" if none
  std::vector<GroupedFinding> fixed;     // the baseline's findings gone from this trace
  // The baseline's findings this trace still has below its report's findings (in no flagged
  // window, too small across the steady state to list): unchanged, worse or better, not fixed; they
  // are not reported findings, so they do not fail the gate.
  std::vector<GroupedFinding> still_present;
  // Every finding of this run, listed or not: one per rule finding across the steady state
  // (every severity, after the config's ignores), and one per id only some window shows
  // (its cost summed over the windows). What --baseline checks before it calls a baseline
  // finding fixed; not rendered.
  std::vector<GroupedFinding> present;
  // The rule findings of `present` again under each other origin their events lie in, each
  // with that origin's part of its cost (by its events' time there): what still holds a
  // baseline finding whose origin lies inside a finding named after another op (kineto
  // nw0's FP32 matmuls at aten::mm, inside its convolutions' finding). Not rendered.
  std::vector<GroupedFinding> present_elsewhere;
  ReportTimeline timeline;      // the steady state as lanes; only filled for the HTML report
  uint32_t suppressed = 0;      // findings dropped by the config's ignores
  std::vector<std::string> warnings;
  double seconds = 0;           // wall time for this trace, load included
};

struct ReportSettings {  // what shaped the report, echoed in JSON
  int windows = 100;
  int top_k = 5;
  int flag_spacing = 0;  // flagged windows at least this many apart (0: the plain top k, as reports made before it)
  std::string scorer;
  std::string fail_on;               // none|warning|error
  std::optional<double> fail_score;
  std::optional<double> fail_savings;  // percent of step time
  std::string baseline;              // --baseline BASE, "" if none
  double regress = 10;               // --regress PCT
  bool llm = false;                  // an LLM endpoint was configured
  std::string config;                // the config file read, "" if none
};

struct Report {
  std::string tool_version;
  ReportSettings settings;
  std::vector<TraceReport> traces;
  std::vector<std::string> warnings;  // not about one trace
};

// ---- Renderers (src/report/analyze_*.cpp) -----------------------------------------------
struct TextStyle {
  bool color = false;    // ANSI colors (a terminal, NO_COLOR unset)
  bool details = false;  // also every flagged window's findings (--details)
};
std::string render_analyze_text(const Report& report, const TextStyle& style = {});
std::string render_analyze_markdown(const Report& report);
std::string render_analyze_json(const Report& report);   // "schema": "ttap.analyze/2"
std::string render_analyze_sarif(const Report& report);  // SARIF 2.1.0
std::string render_analyze_junit(const Report& report);  // JUnit XML, one testcase per trace
std::string render_analyze_html(const Report& report);   // one self-contained page

// The headline as the lines `ttap analyze` prints under each trace's path.
std::vector<std::string> headline_lines(const TraceReport& trace);

}  // namespace ttap
