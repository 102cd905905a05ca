// How much of a host-side finding's cost the profiler's Python tracer may have added
// (classify.hpp, note_python_tracer). gpuzoo_0032, a run without any injected mistake, read
// "error gpu_idle ... 90.4% of step time" with no word on the tracer beyond the headline.
#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "classify.hpp"
#include "ttap/units.hpp"  // durations as the headline note writes them: both lines read the same figures

namespace ttap {

namespace {

// The findings whose cost is host time the tracer slows: idle GPU while the host works,
// launch gaps, host-bound steps.
constexpr std::array<std::string_view, 3> kHostSide = {"gpu_idle", "launch_bound", "cpu_bound_step"};

using Span = std::pair<int64_t, int64_t>;

// [b, e) lies wholly inside one of `spans` (sorted, disjoint).
bool inside(const std::vector<Span>& spans, int64_t b, int64_t e) {
  auto it = std::upper_bound(spans.begin(), spans.end(), Span{b, INT64_MAX});
  return it != spans.begin() && std::prev(it)->first <= b && e <= std::prev(it)->second;
}

// The launches and the python_function events inside a step, in event order: what
// calls_inside looks at, gathered once for all of a trace's findings.
std::vector<EventId> launches_and_step_calls(const Trace& trace, const EventTree& tree) {
  std::vector<EventId> out;
  for (EventId e = 0; e < trace.size(); ++e) {
    const Category c = trace.category[e];
    if (is_launch(c) || (c == Category::PythonFunction && tree.step_of(e) >= 0)) out.push_back(e);
  }
  return out;
}

// The python_function events of the steps that lie inside `spans`, on the threads that launch
// GPU work inside them (the threads the finding's host time is on): the calls whose tracing
// lies within the finding's own time. Whole calls only, so a floor: a call around an op
// (a module's forward) has its tracer time at its ends, outside the op's span. In analyze's report
// on gpuzoo_0032 gpu_idle's ranges hold 1119 such calls a step and launch_bound's (launch
// gaps and op dispatch) 5, of the 1483 the whole step has.
int64_t calls_inside(const Trace& trace, const std::vector<EventId>& candidates, const std::vector<Span>& spans) {
  std::set<TrackId> launching;
  std::vector<EventId> calls;
  for (EventId e : candidates) {
    if (!inside(spans, trace.ts[e], trace.end(e))) continue;
    if (is_launch(trace.category[e])) launching.insert(trace.track[e]);
    else calls.push_back(e);
  }
  return std::count_if(calls.begin(), calls.end(), [&](EventId e) { return launching.contains(trace.track[e]); });
}

}  // namespace

void note_python_tracer(TraceReport& r, const Trace& trace, const EventTree& tree) {
  const Headline& h = r.headline;
  const int64_t steps = static_cast<int64_t>(tree.steps().size());
  if (h.python_tracer_per_step <= 0 || steps == 0) return;
  const auto host_side = [](const GroupedFinding& g) {
    return !g.one_time && g.cost_per_step && *g.cost_per_step > 0 &&
           std::find(kHostSide.begin(), kHostSide.end(), g.id) != kHostSide.end();
  };
  if (std::none_of(r.findings.begin(), r.findings.end(), host_side)) return;
  const std::vector<EventId> candidates = launches_and_step_calls(trace, tree);
  for (GroupedFinding& g : r.findings) {
    if (!host_side(g)) continue;
    // Per step as the headline counts them (whole calls a step, each at the floor).
    const int64_t calls = calls_inside(trace, candidates, g.cost_spans) / steps;
    if (calls == 0) continue;
    const int64_t added = calls * h.python_tracer_per_event;
    // Severity and the gate keep the full cost: the floor is what the tracer took at least,
    // not what the finding would cost without it (the host may have waited anyway).
    const std::string events =
        fmt::format("{} python_function events per step x {}, see the note above", calls, human_duration(h.python_tracer_per_event));
    g.evidence.push_back(*g.cost_per_step <= added
                             ? fmt::format("the profiler may have added all of this: its Python tracer's own time inside this "
                                           "finding's ranges is at least ~{} per step ({})",
                                           human_duration(added), events)
                             : fmt::format("the profiler may have added ~{} per step or more of this: its Python tracer's own "
                                           "time inside this finding's ranges ({})",
                                           human_duration(added), events));
  }
}

}  // namespace ttap
