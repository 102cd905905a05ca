// What the profiler's Python tracer costs the host (analyze.hpp, PythonTracerCost).
#include <algorithm>
#include <vector>

#include "ttap/analyze.hpp"

namespace ttap {

std::optional<PythonTracerCost> python_tracer_cost(const Trace& trace, const EventTree& tree) {
  const int64_t steps = static_cast<int64_t>(tree.steps().size());
  if (steps == 0 || trace.python_args.empty()) return std::nullopt;
  int64_t events = 0;
  std::vector<int64_t> timed;
  for (EventId e = 0; e < trace.size(); ++e) {
    if (trace.category[e] != Category::PythonFunction || tree.step_of(e) < 0) continue;
    ++events;
    // Nothing under it in the tree: no traced frame and no op, so its time is the call's
    // own tens of ns and the tracer's.
    if (tree.children(e).empty() && trace.name_of(e).starts_with("<built-in")) timed.push_back(trace.dur[e]);
  }
  if (static_cast<int64_t>(timed.size()) < kMinTimedCalls) return std::nullopt;
  auto mid = timed.begin() + static_cast<std::ptrdiff_t>(timed.size() / 2);
  std::nth_element(timed.begin(), mid, timed.end());
  PythonTracerCost c;
  c.events_per_step = events / steps;
  c.per_event = *mid;
  c.calls_timed = static_cast<int64_t>(timed.size());
  c.per_step = c.events_per_step * c.per_event;
  return c;
}

}  // namespace ttap
