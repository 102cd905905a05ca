// analyze_trace: the stages in order, each from its own header. Stages that are not in
// this build yet leave a warning in the report instead of a guess.
#include <algorithm>

#include "classify.hpp"
#include "ttap/windows.hpp"

namespace ttap {

TraceReport analyze_trace(const Trace& trace, const EventTree& tree, const AnalyzeSettings& settings) {
  TraceReport r;
  r.path = trace.source;
  r.headline = make_headline(trace, tree);
  r.savings = make_savings(trace, tree);

  const SteadyState steady = steady_state(trace, tree);
  r.begin = steady.begin;
  r.end = steady.end;
  r.steady_state = steady.source;
  WindowOptions wo;
  wo.count = settings.windows;
  const std::vector<Window> windows = make_windows(trace, tree, wo);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const Window& w : windows) ranges.emplace_back(w.begin, w.end);
  const std::vector<double> busy = gpu_busy_shares(trace, tree, ranges);
  for (size_t i = 0; i < windows.size(); ++i)
    r.windows.push_back({windows[i].index, windows[i].begin, windows[i].end, 0.0, busy[i], false});

  r.warnings.push_back("window scoring and rule detectors are not in this build yet: no findings");
  apply_ignores(r, settings.ignores);
  apply_gate(r, settings.fail_on, settings.fail_score);
  return r;
}

}  // namespace ttap
