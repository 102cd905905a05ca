// Across a fleet of traces: which findings cost the most in total, how widespread each is,
// the worst traces, and how the trace scores spread.
#include <algorithm>
#include <cmath>
#include <map>

#include "analyze_common.hpp"
#include "ttap/fleet.hpp"

namespace ttap {

namespace {

const Saving* saving_for(const TraceReport& t, const std::string& id) {
  for (const Saving& s : t.savings)
    if (s.id == id) return &s;
  return nullptr;
}

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

FleetSummary summarize_fleet(const Report& report, size_t duplicates) {
  FleetSummary f;
  f.traces = report.traces.size();
  f.duplicates = duplicates;
  std::map<std::string, FleetFinding> by_id;
  std::map<std::string, size_t> with_saving;  // traces of each id that carry a what-if
  std::vector<double> scores;
  for (const TraceReport& t : report.traces) {
    if (t.verdict == Verdict::error) {
      ++f.errors;
      continue;
    }
    (t.verdict == Verdict::clean ? f.clean : f.flagged) += 1;
    if (!t.scorer.empty() && std::isfinite(t.score)) scores.push_back(t.score);

    // The trace's top finding is the one its own report names first (grouped findings are
    // ranked by what fixing them saves, else by what they cost): h200_twin's nw4 report leads
    // with launch_bound, an error costing 16.8 ms a step without a what-if, where the largest
    // what-if alone named pageable_memcpy (2.18 ms a step), its third.
    const std::vector<std::string> ids = analyze_render::finding_ids(t);
    FleetTrace worst{t.path, t.verdict, t.score, analyze_render::finding_count(t), ids.empty() ? "" : ids.front()};
    for (const std::string& id : ids) {
      FleetFinding& ff = by_id[id];
      ff.id = id;
      ++ff.traces;
      if (const Saving* s = saving_for(t, id)) {
        ff.saved += s->per_step ? s->saved_per_step * std::max<int64_t>(1, t.headline.steps) : s->saved_per_step;
        ff.mean_step_share += s->step_share;
        ++with_saving[id];
      }
    }
    // Costs and severities as the trace's report gives them: its grouped findings, each over
    // the whole steady state (a pattern seen across the steady state but in no flagged window
    // counts; a stall shown by five flagged windows counts once, whole, not as five slices).
    for (const GroupedFinding& g : t.findings) {
      FleetFinding& ff = by_id[g.id];
      if (ff.name.empty()) ff.name = g.name;
      ff.cost += g.cost;
      ff.worst = std::max(ff.worst, g.severity);
    }
    f.worst.push_back(std::move(worst));
  }
  for (auto& [id, ff] : by_id) {
    ff.traces_with_saving = with_saving[id];
    if (with_saving[id]) ff.mean_step_share /= static_cast<double>(with_saving[id]);
    f.findings.push_back(std::move(ff));
  }
  std::sort(f.findings.begin(), f.findings.end(), [](const FleetFinding& a, const FleetFinding& b) {
    if (a.saved != b.saved) return a.saved > b.saved;
    if (a.traces != b.traces) return a.traces > b.traces;
    if (a.cost != b.cost) return a.cost > b.cost;
    return a.id < b.id;
  });
  std::sort(f.worst.begin(), f.worst.end(), [](const FleetTrace& a, const FleetTrace& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.path < b.path;
  });
  if (f.worst.size() > kWorstTraces) f.worst.resize(kWorstTraces);

  std::sort(scores.begin(), scores.end());
  f.scores.count = scores.size();
  f.scores.p50 = percentile(scores, 0.5);
  f.scores.p90 = percentile(scores, 0.9);
  f.scores.max = scores.empty() ? 0 : scores.back();
  for (double s : scores) ++f.scores.histogram[std::clamp<size_t>(static_cast<size_t>(std::max(0.0, s) * 10), 0, 9)];
  return f;
}

}  // namespace ttap
