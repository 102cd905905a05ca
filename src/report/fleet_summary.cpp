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

    FleetTrace worst{t.path, t.verdict, t.score, analyze_render::finding_count(t), {}};
    int64_t top_saving = -1;
    for (const std::string& id : analyze_render::finding_ids(t)) {
      FleetFinding& ff = by_id[id];
      ff.id = id;
      ++ff.traces;
      if (const Saving* s = saving_for(t, id)) {
        const int64_t saved = s->per_step ? s->saved_per_step * std::max<int64_t>(1, t.headline.steps) : s->saved_per_step;
        ff.saved += saved;
        ff.mean_step_share += s->step_share;
        ++with_saving[id];
        if (saved > top_saving) {
          top_saving = saved;
          worst.top_id = id;
        }
      }
      if (worst.top_id.empty() && top_saving < 0) worst.top_id = id;
    }
    for (const FlaggedWindow& w : t.flagged)
      for (const Finding& x : w.findings) {
        FleetFinding& ff = by_id[x.id];
        if (ff.name.empty()) ff.name = x.name;
        ff.cost += x.cost;
        ff.worst = std::max(ff.worst, x.severity);
      }
    f.worst.push_back(std::move(worst));
  }
  for (auto& [id, ff] : by_id) {
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
