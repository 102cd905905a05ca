// What a run found anywhere, listed in its report or not (TraceReport::present): what
// --baseline checks before it calls a baseline finding fixed. A finding the report does not
// list (in no flagged window, below a warning across the steady state) is still there:
// h200_twin nw0 makes the same 12 pageable HtoD copies as nw4, whose report lists them.
// A rule finding is present under every origin its events lie in, not only the one it is
// named after (TraceReport::present_elsewhere): kineto nw4 lists FP32 matmuls at aten::mm
// (two windows that hold only the head's matmuls), which nw0's one FP32 finding holds under
// aten::cudnn_convolution.
#include <algorithm>

#include "classify.hpp"
#include "ttap/catalog.hpp"

namespace ttap {

void set_present_findings(TraceReport& r, const std::vector<RuleFinding>& across, const std::map<std::string, int64_t>& over_windows,
                          const std::vector<Ignore>& ignores, const Trace& trace, const EventTree& tree) {
  std::vector<GroupedFinding>& out = r.present;
  out.clear();
  r.present_elsewhere.clear();
  const int64_t span = r.end - r.begin;
  for (const RuleFinding& rf : across) {
    const std::map<std::string, int64_t> owned = origin_times(rf, trace, tree);
    const Finding f = to_finding(rf, trace, tree, r.savings, r.begin, r.end, main_origin(rf, owned));
    if (ignored(ignores, r.path, f)) continue;
    GroupedFinding g = group_of(f);
    g.confidence = f.confidence;
    g.steady_state = true;
    g.cost = f.cost;
    g.evidence = f.evidence;
    g.fix = f.fix;
    g.locations = f.locations;
    set_cost_share(g, r.headline, span);
    int64_t all = 0;
    for (const auto& [origin, time] : owned) all += time;
    for (const auto& [origin, time] : owned) {
      if (origin.empty() || origin == g.origin) continue;
      GroupedFinding part = g;
      part.origin = origin;
      part.cost = static_cast<int64_t>(static_cast<double>(f.cost) * static_cast<double>(time) / static_cast<double>(all));
      set_cost_share(part, r.headline, span);
      r.present_elsewhere.push_back(std::move(part));
    }
    out.push_back(std::move(g));
  }
  // An id no rule sees across the steady state as one range may still show in windows
  // (each judged alone); without its events, its origin is unknown and an ignore by file
  // cannot match it.
  for (const auto& [id, cost] : over_windows) {
    if (cost <= 0) continue;
    // `wanted`, not `id` itself: clang 14 refuses a lambda that uses a structured binding.
    if (std::any_of(out.begin(), out.end(), [&wanted = id](const GroupedFinding& g) { return g.id == wanted && !g.one_time; })) continue;
    Finding f;
    f.id = id;
    if (ignored(ignores, r.path, f)) continue;
    GroupedFinding g;
    g.id = id;
    if (const AntiPattern* ap = find_anti_pattern(id)) g.name = std::string(ap->name);
    g.severity = Severity::info;
    g.source = "rules";
    g.cost = cost;
    set_cost_share(g, r.headline, span);
    out.push_back(std::move(g));
  }
}

}  // namespace ttap
