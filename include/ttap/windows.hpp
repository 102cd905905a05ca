// Windows: the steady-state region of a trace cut into N equal time windows, the unit the
// detector scores and the classifier explains.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ttap/tree.hpp"

namespace ttap {

// Where the steady state is: the ProfilerStep#N spans when present (first start to last
// end), else the span of GPU activity, else of CPU activity. ns.
struct SteadyState {
  int64_t begin = 0;
  int64_t end = 0;
  std::string source;  // "steps", "gpu" or "cpu"
};
SteadyState steady_state(const Trace& trace, const EventTree& tree);

struct WindowOptions {
  int count = 100;         // windows per trace
  int max_events = 128;    // events kept per window (see make_windows)
};

struct Window {
  uint32_t index = 0;
  int64_t begin = 0;  // ns, [begin, end)
  int64_t end = 0;
  // The events the model sees, by start time (see make_windows for the selection).
  std::vector<EventId> events;
  uint32_t candidates = 0;  // events that started in the window before the cap
};

// Cuts the steady state into `count` windows of equal duration. An event belongs to the
// window its start falls in. When a window holds more than max_events, the selection is
// deterministic and keeps, in this order: GPU activity (kernels, copies, sets), the
// runtime calls that launched it, the CPU ops that own those launches, then the longest
// remaining CPU events; ties broken by start time, then event id.
std::vector<Window> make_windows(const Trace& trace, const EventTree& tree, const WindowOptions& options = {});

}  // namespace ttap
