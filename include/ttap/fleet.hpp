// Past one process: analyze reports of many traces (shards of one run, earlier runs) merged
// into one, and the view across the whole fleet of traces that `ttap merge` prints after
// the per-trace verdicts. docs/fleet.md shows the shard/merge pattern on Slurm and others.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ttap/report.hpp"

namespace ttap {

// ---- Merging (src/report/fleet_merge.cpp) -----------------------------------------------
struct MergedReport {
  Report report;            // every distinct trace, by path
  size_t duplicates = 0;    // traces seen again (same path and content hash), counted once
};
// Reports in the order read. A trace repeated with the same path and content hash keeps its
// first report; the same path with other content (the trace changed) counts as another
// trace. Settings come from the first report; a report run with other settings adds a
// warning, since its verdicts were judged differently.
MergedReport merge_reports(std::vector<Report> reports);

// ---- The fleet view (src/report/fleet_summary.cpp) ---------------------------------------
struct FleetFinding {
  std::string id;
  std::string name;
  size_t traces = 0;               // traces showing it (any window or the steady state)
  // ns: the profiled time the fix would have saved in those traces, summed (a what-if per
  // step times the trace's steps; one over the profiled span as it is), so traces with
  // many steps and few weigh by what they recorded.
  int64_t saved = 0;
  double mean_step_share = 0;      // of their step time, mean over the traces with a saving
  // Traces whose report gives the id a what-if; with none, saved and mean_step_share are no
  // estimate (rendered "-"), not a saving of zero.
  size_t traces_with_saving = 0;
  int64_t cost = 0;                // ns: its grouped findings' costs (whole steady state) summed
  Severity worst = Severity::info;
};

struct FleetTrace {
  std::string path;
  Verdict verdict = Verdict::clean;
  double score = 0;
  size_t findings = 0;
  std::string top_id;              // the id its report names first (its top grouped finding)
};

struct ScoreDistribution {
  size_t count = 0;                // scored traces (errors and unscored traces left out)
  double p50 = 0, p90 = 0, max = 0;
  std::array<size_t, 10> histogram{};  // [0,0.1), [0.1,0.2), ... [0.9,1.0]
};

struct FleetSummary {
  size_t traces = 0, clean = 0, flagged = 0, errors = 0, duplicates = 0;
  std::vector<FleetFinding> findings;  // by saved, then traces, then cost
  std::vector<FleetTrace> worst;       // highest score first, at most kWorstTraces
  ScoreDistribution scores;
};
inline constexpr size_t kWorstTraces = 10;

FleetSummary summarize_fleet(const Report& report, size_t duplicates);

// ---- Rendering (src/report/fleet_render.cpp) --------------------------------------------
std::string render_fleet_text(const FleetSummary& f);
std::string render_fleet_markdown(const FleetSummary& f);
std::string render_fleet_json(const FleetSummary& f);  // one JSON object
// `{"a":1}\n` + ("fleet", V) -> `{"a":1,"fleet":V}\n`: a section added to a JSON report
// (analyze or otherwise) without its renderer knowing about it.
std::string append_json_member(std::string object_text, std::string_view key, const std::string& value);

}  // namespace ttap
