// Baselines (--baseline): a trace's grouped findings against an earlier run's, so a CI gate
// fails on what is new or worse rather than on every problem the code already had.
#include <algorithm>

#include "classify.hpp"

namespace ttap {

namespace {

// Worse: what it costs per step rose by more than regress_pct percent; better: it fell by
// more than that. Without steps on both sides, the share of the steady state stands in for
// the cost per step.
BaselineState compared(const GroupedFinding& now, const GroupedFinding& base, double regress_pct) {
  const bool per_step = now.cost_per_step && base.cost_per_step;
  const double cost = per_step ? static_cast<double>(*now.cost_per_step) : now.share;
  const double was = per_step ? static_cast<double>(*base.cost_per_step) : base.share;
  if (cost > (1.0 + regress_pct / 100.0) * was) return BaselineState::worse;
  if (cost < (1.0 - regress_pct / 100.0) * was) return BaselineState::better;
  return BaselineState::unchanged;
}

// What the run still has of a baseline finding no listed finding matched: a finding of the
// same id and origin anywhere in the run, else, where the report lists no finding of that
// id, its costliest finding of that id (an origin can move between two recordings, as the
// matching above allows), else the part in b's origin of a finding named after another op
// (kineto nw0 lists FP32 math at aten::cudnn_convolution, whose matmuls at aten::mm are
// nw4's second FP32 group). nullptr when the run no longer has it: fixed.
// Each finding of the run stands for one baseline finding at most.
const GroupedFinding* still_there(const TraceReport& trace, const GroupedFinding& b, const std::vector<const GroupedFinding*>& used) {
  // The costliest finding of `run` not yet standing for another, of b's id (and origin).
  const auto costliest = [&](const std::vector<GroupedFinding>& run, bool by_origin) {
    const GroupedFinding* best = nullptr;
    for (const GroupedFinding& p : run)
      if (std::find(used.begin(), used.end(), &p) == used.end() && p.id == b.id && p.one_time == b.one_time &&
          (!by_origin || p.origin == b.origin) && (!best || p.cost > best->cost))
        best = &p;
    return best;
  };
  if (const GroupedFinding* same = costliest(trace.present, true)) return same;
  const bool listed = std::any_of(trace.findings.begin(), trace.findings.end(),
                                  [&](const GroupedFinding& g) { return g.id == b.id && g.one_time == b.one_time; });
  if (!listed) return costliest(trace.present, false);
  return costliest(trace.present_elsewhere, true);
}

}  // namespace

void compare_with_baseline(TraceReport& trace, const TraceReport& baseline, double regress_pct) {
  trace.baseline = baseline.path.empty() ? std::string("baseline") : baseline.path;
  trace.fixed.clear();
  trace.still_present.clear();
  std::vector<int> match(trace.findings.size(), -1);
  std::vector<bool> taken(baseline.findings.size(), false);
  auto pass = [&](bool by_origin) {
    for (size_t i = 0; i < trace.findings.size(); ++i) {
      if (match[i] >= 0) continue;
      const GroupedFinding& g = trace.findings[i];
      for (size_t j = 0; j < baseline.findings.size(); ++j) {
        const GroupedFinding& b = baseline.findings[j];
        // One-time capture work and steady-state work are different problems.
        if (taken[j] || b.id != g.id || b.one_time != g.one_time || (by_origin && b.origin != g.origin)) continue;
        match[i] = static_cast<int>(j);
        taken[j] = true;
        break;
      }
    }
  };
  pass(true);
  pass(false);  // both lists are ranked, so what is left pairs up costliest first
  for (size_t i = 0; i < trace.findings.size(); ++i) {
    GroupedFinding& g = trace.findings[i];
    if (match[i] < 0) {
      g.baseline = BaselineState::added;
      continue;
    }
    const GroupedFinding& b = baseline.findings[static_cast<size_t>(match[i])];
    g.baseline = compared(g, b, regress_pct);
    g.baseline_cost_per_step = b.cost_per_step;
    g.baseline_share = b.share;
  }
  std::vector<const GroupedFinding*> used;
  for (size_t j = 0; j < baseline.findings.size(); ++j) {
    if (taken[j]) continue;
    const GroupedFinding& b = baseline.findings[j];
    if (const GroupedFinding* now = still_there(trace, b, used)) {
      used.push_back(now);
      GroupedFinding kept = *now;
      kept.baseline = compared(kept, b, regress_pct);
      kept.baseline_cost_per_step = b.cost_per_step;
      kept.baseline_share = b.share;
      trace.still_present.push_back(std::move(kept));
      continue;
    }
    GroupedFinding gone = baseline.findings[j];
    gone.baseline = BaselineState::fixed;
    gone.baseline_cost_per_step = gone.cost_per_step;
    gone.baseline_share = gone.share;
    trace.fixed.push_back(std::move(gone));
  }
}

}  // namespace ttap
