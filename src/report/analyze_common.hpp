// Helpers the analyze renderers share: units, labels, escaping. Internal to src/report/.
#pragma once

#include <string>
#include <string_view>

#include "ttap/analyze.hpp"
#include "ttap/report.hpp"
#include "ttap/units.hpp"

namespace ttap::analyze_render {

std::string ms(int64_t ns);                 // a duration, as human_duration

using ttap::human_bytes;     // ttap/units.hpp: every stage's text reads the same figures
using ttap::human_duration;
// "+1.234 ms" from the trace's first event (TraceReport::origin), as the LLM prompt says it.
std::string offset_ms(const TraceReport& t, int64_t ns);
std::string location_text(const CodeLocation& l);  // "train.py:42 (step)"
std::string xml_escape(std::string_view s);        // also drops characters XML 1.0 forbids
std::string saving_text(const Saving& s);          // "~48.6 ms per step (27.8%)"
// The span the windows cut, after its length: "of steps", "from first to last GPU activity"
// (TraceReport::steady_state "gpu"), "of CPU activity" ("cpu").
std::string steady_state_text(std::string_view source);

// A grouped finding's parts as every renderer words them.
// "6 occurrences in steps 3-8" ("1 occurrence", "in the steady state" without steps).
std::string occurrences_text(const GroupedFinding& g);
// "~48.102 ms per step (27.5% of step time)", "12.345 ms (3.1% of the steady state)";
// one-time work adds kOneTimeText.
std::string group_cost_text(const GroupedFinding& g);
// What a finding compared with a baseline cost there: "~3.51 ms per step (8.1% of step time)".
std::string baseline_cost_text(const GroupedFinding& g);
// "+0.000 ms .. +10.420 ms" for each occurrence shown.
std::vector<std::string> occurrence_ranges(const TraceReport& t, const GroupedFinding& g);
// How many of `groups` compare with the baseline as `state`.
size_t count_state(const std::vector<GroupedFinding>& groups, BaselineState state);
// "1 new, 0 worse, 2 better, 1 unchanged, 0 fixed" for a trace compared with a baseline.
std::string baseline_counts_text(const TraceReport& t);
// "Fixing every finding would recover ~40.4% of step time." (TraceReport::recoverable_share).
std::string recoverable_text(const TraceReport& t);
// What every renderer says of a one-time finding (GroupedFinding::one_time): why it is info
// and neither in the recoverable share nor gated on.
inline constexpr std::string_view kOneTimeText =
    "one-time: CUDA graph capture (warm-up), not counted in recoverable, does not fail the gate";
// Whether a grouped finding counts against a baseline gate (new or worse).
bool is_new_or_worse(const GroupedFinding& g);

struct Counts {
  size_t clean = 0, flagged = 0, errors = 0, gate_failed = 0;
  size_t findings = 0;         // grouped findings
  size_t window_findings = 0;  // findings of flagged windows and steady states, before grouping
  size_t added = 0, worse = 0, better = 0, unchanged = 0, fixed = 0;  // against --baseline
  size_t still_present = 0;  // the baseline's findings still here below the reports' listed ones
};
Counts count(const Report& r);
size_t finding_count(const TraceReport& t);  // grouped findings
// Distinct finding ids of a trace, in the grouped findings' rank order.
std::vector<std::string> finding_ids(const TraceReport& t);

}  // namespace ttap::analyze_render
