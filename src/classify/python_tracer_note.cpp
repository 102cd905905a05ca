// How much of a host-side finding's cost the profiler's Python tracer may have added
// (classify.hpp, note_python_tracer). gpuzoo_0032, a run without any injected mistake, read
// "error gpu_idle ... 90.4% of step time" with no word on the tracer beyond the headline.
#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "classify.hpp"
#include "ttap/units.hpp"  // durations as the headline note writes them: both lines read the same figures

namespace ttap {

namespace {

// The findings whose cost is host time the tracer slows: idle GPU while the host works,
// launch gaps, host-bound steps.
constexpr std::array<std::string_view, 3> kHostSide = {"gpu_idle", "launch_bound", "cpu_bound_step"};

}  // namespace

void note_python_tracer(TraceReport& r) {
  const Headline& h = r.headline;
  if (h.python_tracer_per_step <= 0) return;
  for (GroupedFinding& g : r.findings) {
    if (g.one_time || !g.cost_per_step || *g.cost_per_step <= 0) continue;
    if (std::find(kHostSide.begin(), kHostSide.end(), g.id) == kHostSide.end()) continue;
    const std::string events = fmt::format("{} python_function events x {}, see the note above", h.python_functions_per_step,
                                           human_duration(h.python_tracer_per_event));
    const std::string per_step = human_duration(h.python_tracer_per_step);
    g.evidence.push_back(*g.cost_per_step <= h.python_tracer_per_step
                             ? fmt::format("the profiler may have added all of this: its Python tracer's own time over the whole "
                                           "step is at least ~{} ({})", per_step, events)
                             : fmt::format("the profiler may have added ~{} per step or more of this: its Python tracer's own "
                                           "time over the whole step ({})", per_step, events));
  }
}

}  // namespace ttap
