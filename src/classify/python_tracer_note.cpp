// How much of a host-side finding's cost the profiler's Python tracer may have added
// (classify.hpp, note_python_tracer). gpuzoo_0032, a run without any injected mistake, read
// "error gpu_idle ... 90.4% of step time" with no word on the tracer beyond the headline.
#include <algorithm>
#include <array>
#include <cstdint>
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

// The entry and exit timestamps of the steps' python_function calls on the threads that launch
// GPU work (a kernel, copy or memset, by correlation), sorted: where the tracer worked on the
// threads a host-side finding's time is on (those whose host time keeps the GPU waiting; the
// tracer on another Python thread, the DataLoader's pin-memory one, slows them only through the
// GIL, so it is left out of a floor). Gathered once for all of a trace's findings.
//
// The tracer works at a call's two ends, not along it: PyTorch's tracer
// (torch/csrc/autograd/profiler_python.cpp, pyProfileFn, set with PyEval_SetProfile) runs on
// each call and C call (recordPyCall/recordCCall: intern the call site, then store it with the
// entry timestamp) and on each return or exception (store the exit timestamp), and nothing in
// between. A module's forward around an op adds its tracer time at its two ends, wherever they
// fall, not across the op. On gpuzoo_0032 gpu_idle's ranges hold 1699 ends a step on the main
// thread; launch_bound's (op dispatch and launch gaps) 1: the ends lie next to them, not in them.
std::vector<int64_t> traced_ends(const Trace& trace, const EventTree& tree) {
  std::set<TrackId> launching;
  for (EventId e = 0; e < trace.size(); ++e)
    if (is_gpu_activity(trace.category[e]) && tree.launcher(e) != kNoEvent) launching.insert(trace.track[tree.launcher(e)]);
  std::vector<int64_t> ends;
  for (EventId e = 0; e < trace.size(); ++e)
    if (trace.category[e] == Category::PythonFunction && tree.step_of(e) >= 0 && launching.contains(trace.track[e])) {
      ends.push_back(trace.ts[e]);
      ends.push_back(trace.end(e));
    }
  std::sort(ends.begin(), ends.end());
  return ends;
}

// How many of `ends` (sorted) lie inside `spans` (sorted, disjoint), either edge included.
int64_t ends_inside(const std::vector<int64_t>& ends, const std::vector<Span>& spans) {
  int64_t n = 0;
  for (const auto& [b, e] : spans)
    n += std::upper_bound(ends.begin(), ends.end(), e) - std::lower_bound(ends.begin(), ends.end(), b);
  return n;
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
  const std::vector<int64_t> ends_traced = traced_ends(trace, tree);
  for (GroupedFinding& g : r.findings) {
    if (!host_side(g)) continue;
    // Per step as the headline counts them. The per-call floor is the tracer's work between a
    // call's two timestamps (the rest of the entry hook after its timestamp, the exit hook up to
    // its own), split evenly between the two ends (the trace cannot tell the parts apart). The
    // hooks' work on the other side of each timestamp (interning the call site before the
    // entry's, storing the exit after its own) is not in it.
    const int64_t ends = ends_inside(ends_traced, g.cost_spans) / steps;
    if (ends == 0) continue;
    const int64_t per_end = h.python_tracer_per_event / 2;
    const int64_t added = ends * per_end;
    // Severity and the gate keep the full cost: the floor is what the tracer took at least,
    // not what the finding would cost without it (the host may have waited anyway).
    const std::string events =
        fmt::format("{} python_function call entries and exits per step x {}, each half the per-call floor in the note above",
                    ends, human_duration(per_end));
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
