// One finding per problem: the findings of a trace's flagged windows and of its steady
// state, folded by id and origin (the op, annotation or file:line that owns them), with the
// pattern's extent over the whole steady state (how often, in which steps and windows,
// what it costs per step), ranked by what fixing it saves. Computed once, here; the
// renderers only show it.
#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "classify.hpp"
#include "ttap/analyze.hpp"

namespace ttap {

namespace {

constexpr size_t kOccurrencesShown = 5;  // "the first few time ranges"
constexpr size_t kLocationsKept = 3;

// The share of step (or steady-state) time the GPU had no work: what fixing host-side
// patterns can give back at most.
double idle_share(const Headline& h) {
  if (h.steps > 0) return std::clamp(1.0 - h.step_gpu_busy, 0.0, 1.0);
  const auto primary = std::max_element(h.gpus.begin(), h.gpus.end(),
                                        [](const GpuHeadline& a, const GpuHeadline& b) { return a.busy < b.busy; });
  if (primary == h.gpus.end() || primary->total <= 0) return 1.0;
  return std::clamp(static_cast<double>(primary->idle) / static_cast<double>(primary->total), 0.0, 1.0);
}

// Patterns whose cost is GPU work a fix makes shorter (wasteful kernels, copies, blocking
// communication); every other pattern costs time the GPU waits for the host.
bool costs_gpu_work(std::string_view id) {
  static constexpr std::string_view kGpuWork[] = {"grad_not_set_to_none", "unfused_elementwise", "fp32_no_tensor_cores",
                                                  "layout_conversion",    "cast_churn",          "redundant_copy",
                                                  "low_occupancy",        "comm_not_overlapped", "comm_blocks_compute"};
  return std::find(std::begin(kGpuWork), std::end(kGpuWork), id) != std::end(kGpuWork);
}

int source_rank(std::string_view s) { return s == "rules+llm" ? 2 : s == "rules" ? 1 : 0; }

std::string code_origin(const CodeLocation& l) { return l.line > 0 ? l.file + ":" + std::to_string(l.line) : l.file; }

// The innermost CPU op above a CPU event (itself when it is one): a sync call is owned by
// the aten::item that made it, not by the runtime call.
EventId enclosing_cpu_op(const Trace& trace, const EventTree& tree, EventId e) {
  for (EventId a = e; a != kNoEvent; a = tree.parent(a))
    if (trace.category[a] == Category::CpuOp) return a;
  return kNoEvent;
}

// Spans clipped to the steady state.
std::vector<Interval> clipped_spans(const std::vector<Interval>& spans, int64_t begin, int64_t end) {
  std::vector<Interval> out;
  for (auto [b, e] : spans)
    if (std::min(end, e) > std::max(begin, b)) out.emplace_back(std::max(begin, b), std::min(end, e));
  return out;
}

// Every event's span, clipped to the steady state.
std::vector<Interval> event_spans(const Trace& trace, const std::vector<EventId>& events, int64_t begin, int64_t end) {
  std::vector<Interval> spans;
  for (EventId e : events)
    if (e < trace.size()) spans.emplace_back(trace.ts[e], trace.end(e));
  return clipped_spans(spans, begin, end);
}

// Spans merged into occurrences: one stretch of the pattern, even when it is many events
// (the FP32 convolutions of one backward pass are one occurrence, not 100), so spans
// closer than `gap` join.
std::vector<Interval> occurrence_spans(std::vector<Interval> spans, int64_t gap) {
  std::sort(spans.begin(), spans.end());
  std::vector<Interval> out;
  for (const Interval& s : spans) {
    if (!out.empty() && s.first - out.back().second <= gap) out.back().second = std::max(out.back().second, s.second);
    else out.push_back(s);
  }
  return out;
}

int64_t step_at(const EventTree& tree, int64_t ts) {
  for (const Step& s : tree.steps())
    if (ts >= s.ts && ts < s.end) return s.number;
  return -1;
}

int64_t window_at(const std::vector<WindowScore>& windows, int64_t ts) {
  auto it = std::upper_bound(windows.begin(), windows.end(), ts, [](int64_t t, const WindowScore& w) { return t < w.begin; });
  if (it == windows.begin()) return -1;
  --it;
  return ts < it->end ? static_cast<int64_t>(it->index) : -1;
}

void add_location(std::vector<CodeLocation>& into, const CodeLocation& l) {
  if (into.size() >= kLocationsKept) return;
  for (const CodeLocation& have : into)
    if (have.file == l.file && have.line == l.line) return;
  into.push_back(l);
}

// A frame that names no code a user can find: a pybind built-in ("<built-in method  of
// pybind11_builtins.pybind11_detail_function_record_v1_... object>", "<built-in method
// capture_end of ...>") or torch/_ops.py's __call__, which only dispatches to one.
bool names_no_code(std::string_view name) {
  return name.starts_with("<built-in ") || name.starts_with("torch/_ops.py(");
}

// The nearest frame or op at or above a CPU event that names code a user can find: the
// record_function exit that holds a 315 us built-in call is torch/autograd/profiler.py's
// __exit__. The event itself where nothing above it does.
EventId readable_frame(const Trace& trace, const EventTree& tree, EventId e) {
  for (EventId a = e; a != kNoEvent; a = tree.parent(a))
    if (!names_no_code(trace.name_of(a))) return a;
  return e;
}

// A group: id, origin and whether it is one-time capture work.
using GroupKey = std::tuple<std::string, std::string, bool>;

}  // namespace

std::string event_origin(const Trace& trace, const EventTree& tree, EventId e) {
  if (e >= trace.size()) return "";
  if (is_gpu_activity(trace.category[e])) {
    if (const EventId op = tree.owner_op(e); op != kNoEvent) return without_addresses(trace.name_of(op));
    if (const EventId launch = tree.launcher(e); launch != kNoEvent) return without_addresses(trace.name_of(launch));
    // A kernel without a recorded launch (tracelens_qwen05b_mi300) is named by its function,
    // as the rules' evidence names it, not by its 600-character signature.
    return readable_kernel_name(trace.name_of(e));
  }
  if (is_launch(trace.category[e]))
    if (const EventId op = enclosing_cpu_op(trace, tree, e); op != kNoEvent) return without_addresses(trace.name_of(op));
  return without_addresses(trace.name_of(readable_frame(trace, tree, e)));
}

std::map<std::string, int64_t> origin_times(const RuleFinding& rule, const Trace& trace, const EventTree& tree) {
  // GPU work counts by its time inside the finding's extent: hta_sampled_rank0's window 89
  // holds 8.24 ms of a SendRecv that began before it and the first 0.66 ms of a 63.6 ms
  // all-gather, and is the SendRecv's.
  std::map<std::string, int64_t> owned;
  for (EventId e : rule.events) {
    if (e >= trace.size()) continue;
    int64_t time = trace.dur[e];
    const int64_t inside = std::min(trace.end(e), rule.end) - std::max(trace.ts[e], rule.begin);
    if (is_gpu_activity(trace.category[e]) && inside > 0) time = inside;
    owned[event_origin(trace, tree, e)] += std::max<int64_t>(1, time);
  }
  return owned;
}

std::string finding_origin(const RuleFinding& rule, const Trace& trace, const EventTree& tree) {
  return main_origin(rule, origin_times(rule, trace, tree));
}

std::string main_origin(const RuleFinding& rule, const std::map<std::string, int64_t>& owned) {
  // The owner of most of its events' time, not of its first event: a window's most telling
  // event varies from window to window, the op that holds the time much less.
  if (!owned.empty())
    return std::max_element(owned.begin(), owned.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first;
  if (!rule.locations.empty()) return code_origin(rule.locations.front());
  return "";
}

namespace {

// Patterns fixed by one switch for the whole run, whatever op shows them: FP32 math by
// autocast or TF32. Every op's instance is one problem. Not so where the fix is per call:
// hta_sampled_rank0's exposed all-gather and all-reduce are issued (and made asynchronous)
// apart, and a cpu_bound_step's slow ops are each their own.
bool fixed_for_the_whole_run(std::string_view id) { return id == "fp32_no_tensor_cores"; }

// Window findings of such a pattern whose origin the rules across the steady state name among
// the events of one finding go to that finding's group, when a window shows it (its origin:
// the op holding most of its time): gpuzoo_0001's FP32 convolutions and its one FP32
// aten::addmm are one fp32_no_tensor_cores finding across the steady state, but window 99
// shows only the addmm, which stood as a second group at 0.0% of step time.
// Maps each such window key to the origin of the group it folds into.
std::map<GroupKey, std::string> origins_folded(const TraceReport& r, const std::vector<RuleFinding>& across,
                                               const Trace& trace, const EventTree& tree) {
  std::set<GroupKey> shown;
  for (const FlaggedWindow& w : r.flagged)
    for (const Finding& f : w.findings) shown.insert({f.id, f.origin, f.one_time});
  std::map<GroupKey, std::string> folded;
  for (const RuleFinding& a : across) {
    if (!fixed_for_the_whole_run(a.id)) continue;
    const std::map<std::string, int64_t> owned = origin_times(a, trace, tree);
    const std::string main = main_origin(a, owned);
    if (!shown.count({a.id, main, a.one_time})) continue;
    for (const auto& [origin, time] : owned)
      if (origin != main && shown.count({a.id, origin, a.one_time})) folded.try_emplace({a.id, origin, a.one_time}, main);
  }
  return folded;
}

}  // namespace

GroupedFinding group_of(const Finding& f) {
  GroupedFinding g;
  g.id = f.id;
  g.name = f.name;
  g.origin = f.origin;
  g.severity = f.severity;
  g.source = f.source;
  g.one_time = f.one_time;
  return g;
}

void set_cost_share(GroupedFinding& g, const Headline& h, int64_t span) {
  // A cost spread over the steady state is never more than all of it.
  if (span > 0) g.cost = std::min(g.cost, span);
  if (h.steps > 0 && h.step_mean > 0) {
    g.cost_per_step = g.cost / h.steps;
    g.share = std::clamp(static_cast<double>(*g.cost_per_step) / static_cast<double>(h.step_mean), 0.0, 1.0);
  } else if (span > 0) {
    g.share = std::clamp(static_cast<double>(g.cost) / static_cast<double>(span), 0.0, 1.0);
  }
}

void group_findings(TraceReport& r, const std::vector<RuleFinding>& across, const Trace& trace, const EventTree& tree,
                    const WindowsExtent& windows) {
  r.findings.clear();
  // By id, origin and whether it is one-time capture work: the same op's calls during
  // capture and after it are two problems, one of which costs the steady state nothing.
  std::map<GroupKey, size_t> index;
  std::vector<int64_t> member_cost;  // per group: the highest member cost (picks its evidence)
  std::vector<std::vector<Interval>> member_spans;
  std::vector<std::optional<Interval>> fallback_spans;
  std::vector<double> id_share;  // per group: its id's share across the trace
  const std::map<GroupKey, std::string> folded = origins_folded(r, across, trace, tree);
  for (const FlaggedWindow& w : r.flagged)
    for (const Finding& f : w.findings) {
      GroupKey key{f.id, f.origin, f.one_time};
      if (const auto to = folded.find(key); to != folded.end()) std::get<1>(key) = to->second;
      auto [it, added] = index.try_emplace(key, r.findings.size());
      if (added) {
        r.findings.push_back(group_of(f));
        r.findings.back().origin = std::get<1>(key);
        member_cost.push_back(-1);
        member_spans.emplace_back();
        fallback_spans.emplace_back();
        id_share.push_back(0);
      }
      const size_t gi = it->second;
      GroupedFinding& g = r.findings[gi];
      g.severity = std::max(g.severity, f.severity);
      id_share[gi] = std::max(id_share[gi], f.id_share);
      g.confidence = std::max(g.confidence, f.confidence);
      if (source_rank(f.source) > source_rank(g.source)) g.source = f.source;
      if (w.steady_state) g.steady_state = true;
      else if (std::find(g.windows.begin(), g.windows.end(), w.index) == g.windows.end()) g.windows.push_back(w.index);
      if (!g.saving && f.saving) g.saving = f.saving;
      if (g.explanation.empty()) g.explanation = f.explanation;
      for (const CodeLocation& l : f.locations) add_location(g.locations, l);
      g.cost += f.cost;  // replaced below by the whole steady state's cost when the rules saw it there
      // A steady-state finding's range is the whole pattern's extent, one span over
      // many instances: its events give the occurrences instead (below).
      if (f.end > f.begin && !w.steady_state) member_spans[gi].emplace_back(f.begin, f.end);
      if (f.end > f.begin && w.steady_state) fallback_spans[gi] = {f.begin, f.end};
      if (f.cost > member_cost[gi]) {
        member_cost[gi] = f.cost;
        g.evidence = f.evidence;
        g.fix = f.fix;
      }
    }

  // The rules across the whole steady state give each problem its full extent. Each of
  // their findings goes to the group of its id and origin, else to its id's costliest group
  // (a window's most telling event can differ from the whole steady state's).
  std::vector<const RuleFinding*> extent(r.findings.size(), nullptr);
  std::vector<bool> used(across.size(), false);
  for (size_t a = 0; a < across.size(); ++a) {
    const auto it = index.find({across[a].id, finding_origin(across[a], trace, tree), across[a].one_time});
    if (it != index.end() && !extent[it->second]) extent[it->second] = &across[a], used[a] = true;
  }
  for (size_t a = 0; a < across.size(); ++a) {
    if (used[a]) continue;
    size_t best = r.findings.size();
    for (size_t gi = 0; gi < r.findings.size(); ++gi)
      if (!extent[gi] && r.findings[gi].id == across[a].id && r.findings[gi].one_time == across[a].one_time && (best == r.findings.size() || r.findings[gi].cost > r.findings[best].cost))
        best = gi;
    if (best < r.findings.size()) extent[best] = &across[a];
  }

  // An id the rules across the steady state do not name (below their share to fire over it
  // as one range) still costs what every window shows, counted once: its costliest group
  // holds that, with where it showed. gpuzoo_0046's gpu_idle read "~84.7 us per step (0.3%
  // of step time); warning: gpu_idle costs 9.3% of step time summed over all windows": its
  // one flagged window's slice of the idle, and the severity of the whole.
  std::vector<bool> over_windows(r.findings.size(), false);
  {
    std::map<std::string, size_t> costliest;
    for (size_t gi = 0; gi < r.findings.size(); ++gi) {
      const GroupedFinding& g = r.findings[gi];
      if (g.one_time || g.source == "llm" || !windows.cost.count(g.id)) continue;
      if (std::any_of(across.begin(), across.end(), [&](const RuleFinding& a) { return a.id == g.id && !a.one_time; })) continue;
      const auto [it, fresh] = costliest.try_emplace(g.id, gi);
      if (!fresh && g.cost > r.findings[it->second].cost) it->second = gi;
    }
    for (const auto& [id, gi] : costliest) over_windows[gi] = windows.cost.at(id) > r.findings[gi].cost;
  }

  const Headline& h = r.headline;
  const int64_t span = r.end - r.begin;
  // A twentieth of a step (a hundredth of the steady state without steps) between two
  // spans still reads as one stretch of the pattern.
  const int64_t gap = h.steps > 0 && h.step_mean > 0 ? h.step_mean / 20 : span / 100;
  for (size_t gi = 0; gi < r.findings.size(); ++gi) {
    GroupedFinding& g = r.findings[gi];
    std::vector<Interval> spans = std::move(member_spans[gi]);
    if (const RuleFinding* rf = extent[gi]) {
      g.cost = rf->cost;
      // The evidence of a window where it showed worst reads in that window's terms;
      // the whole steady state's is for what only shows across it.
      if (g.windows.empty()) {
        g.evidence = rf->evidence;
        if (!rf->fix.empty()) g.fix = rf->fix;
      }
      if (g.locations.empty())
        for (const CodeLocation& l : rf->locations.empty() ? user_code_locations(trace, tree, rf->events) : rf->locations)
          add_location(g.locations, l);
      // The windows' own ranges stay: the rules may name fewer events across the whole
      // steady state than the windows showed (the longest instance, say).
      // Where the rules located its cost (GPU idle gaps) when that is not its events' time.
      const std::vector<Interval> whole =
          rf->spans.empty() ? event_spans(trace, rf->events, r.begin, r.end) : clipped_spans(rf->spans, r.begin, r.end);
      spans.insert(spans.end(), whole.begin(), whole.end());
    }
    if (over_windows[gi]) {
      g.cost = windows.cost.at(g.id);
      if (const auto w = windows.spans.find(g.id); w != windows.spans.end()) {
        const std::vector<Interval> shown = clipped_spans(w->second, r.begin, r.end);
        spans.insert(spans.end(), shown.begin(), shown.end());
      }
    }
    if (spans.empty() && fallback_spans[gi]) spans.push_back(*fallback_spans[gi]);
    g.cost_spans = occurrence_spans(spans, 0);
    spans = occurrence_spans(std::move(spans), gap);
    g.occurrence_count = std::max<size_t>(1, spans.size());
    for (const Interval& s : spans) {
      const int64_t step = step_at(tree, s.first);
      // Every step the stretch runs through: gpuzoo_0032's GPU idle from +1.98 to +26.69 ms
      // read "1 occurrence in step 2" beside a cost per step of both.
      for (const Step& st : tree.steps())
        if (st.ts < s.second && s.first < st.end && std::find(g.steps.begin(), g.steps.end(), st.number) == g.steps.end())
          g.steps.push_back(st.number);
      if (g.occurrences.size() < kOccurrencesShown) g.occurrences.push_back({s.first, s.second, step, window_at(r.windows, s.first)});
    }
    std::sort(g.steps.begin(), g.steps.end());
    set_cost_share(g, h, span);
  }
  // An id's what-if is the whole id's (every instance fixed), so it goes on the id's costliest
  // group alone: on hta_sampled_rank0 the 4.45 ms-a-step all-gather group read "saves ~168 ms
  // per step" and ranked second on it, though the saving is the other group's exposed
  // all-reduce. The others rank by what they cost.
  std::map<std::string, size_t> costliest;
  for (size_t gi = 0; gi < r.findings.size(); ++gi) {
    const GroupedFinding& g = r.findings[gi];
    if (!g.saving) continue;
    const auto [it, fresh] = costliest.try_emplace(g.id, gi);
    if (!fresh && g.cost > r.findings[it->second].cost) it->second = gi;
  }
  for (size_t gi = 0; gi < r.findings.size(); ++gi) {
    GroupedFinding& g = r.findings[gi];
    if (g.saving && costliest[g.id] != gi) g.saving.reset();
    g.rank_share = g.saving ? std::clamp(g.saving->step_share, 0.0, 1.0) : g.share;
  }
  // What an id costs as its groups show it, counted once: the group that holds the rules'
  // cost across the whole steady state holds every instance of the id (the others' windows
  // lie in that steady state), the groups found only in windows add up (windows do not
  // overlap), and its what-if saving.
  std::map<std::string, double> whole, in_windows, shown;
  for (size_t gi = 0; gi < r.findings.size(); ++gi) {
    const GroupedFinding& g = r.findings[gi];
    if (g.one_time) continue;
    if (extent[gi] || over_windows[gi]) whole[g.id] = std::max(whole[g.id], g.share);
    else in_windows[g.id] += g.share;
    if (g.saving) whole[g.id] = std::max(whole[g.id], g.saving->step_share);
  }
  for (const auto& [id, s] : in_windows) shown[id] = std::max(whole[id], std::min(s, 1.0));
  for (const auto& [id, s] : whole) shown[id] = std::max(shown[id], s);
  for (size_t gi = 0; gi < r.findings.size(); ++gi) {
    GroupedFinding& g = r.findings[gi];
    // A severity the group's own figures do not give says where it comes from: on kineto nw4
    // a gpu_idle group read "warning ... costs ~189 us per step (0.1% of step time)", a
    // warning for gpu_idle's 5.8% in all its windows. The figure is the id's as its groups
    // show it when that gives the severity; hta_sampled_rank1's 1.0% gpu_idle group read
    // "error: gpu_idle costs 50.6% of step time across the trace" (every window's gpu_idle
    // summed, each window judged alone, which counts idle that the whole steady state puts
    // on the optimizer loop and the collectives) beside the id's 39.1% group.
    const double own = std::max(g.share, g.saving ? g.saving->step_share : 0.0);
    if (g.one_time || severity_for_share(own) >= g.severity || id_share[gi] <= own) continue;
    if (severity_for_share(shown[g.id]) >= g.severity) {
      g.severity_share = shown[g.id];
    } else {
      g.severity_share = id_share[gi];
      g.severity_windows_share = shown[g.id];
    }
  }
  std::stable_sort(r.findings.begin(), r.findings.end(), [](const GroupedFinding& a, const GroupedFinding& b) {
    if (a.rank_share != b.rank_share) return a.rank_share > b.rank_share;
    return a.severity > b.severity;
  });

  // An id counts once, at its largest share: its groups share its what-if saving, and the
  // whole steady state's cost of the id went to one of them. Fixes of different ids are
  // taken as independent (each recovers its share of what the others left), within two
  // pools bounded separately: the patterns the GPU waits for can give back at most the
  // time the GPU had no work (a step never gets shorter than its GPU work), the wasteful
  // GPU work at most the GPU's busy time. Without a GPU the step is all host time.
  // One-time capture work recovers no step time: it is not counted.
  std::map<std::string, double> by_id;
  for (const GroupedFinding& g : r.findings)
    if (!g.one_time) by_id[g.id] = std::max(by_id[g.id], g.rank_share);
  double waiting_kept = 1.0, gpu_work_kept = 1.0;
  for (const auto& [id, s] : by_id) (costs_gpu_work(id) ? gpu_work_kept : waiting_kept) *= 1.0 - s;
  double waiting = 1.0 - waiting_kept, gpu_work = 1.0 - gpu_work_kept;
  if (!h.gpus.empty()) {
    const double idle = idle_share(h);
    waiting = std::min(waiting, idle);
    gpu_work = std::min(gpu_work, 1.0 - idle);
  }
  r.recoverable_share = std::clamp(waiting + gpu_work, 0.0, 1.0);
}

}  // namespace ttap
