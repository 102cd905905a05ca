#include <algorithm>
#include <map>

#include "ttap/analyze.hpp"

namespace ttap {

std::vector<Interval> merge_intervals(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second) {
      out.back().second = std::max(out.back().second, iv.second);
    } else {
      out.push_back(iv);
    }
  }
  return out;
}

int64_t total_length(const std::vector<Interval>& merged) {
  int64_t sum = 0;
  for (const auto& [b, e] : merged) sum += e - b;
  return sum;
}

int64_t subtract_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  // Both sorted and disjoint: sweep once.
  int64_t covered = 0;
  size_t j = 0;
  for (const auto& [lo, hi] : a) {
    while (j < b.size() && b[j].second <= lo) ++j;
    for (size_t k = j; k < b.size() && b[k].first < hi; ++k)
      covered += std::min(hi, b[k].second) - std::max(lo, b[k].first);
  }
  return total_length(a) - covered;
}

int64_t clipped_length(const std::vector<Interval>& merged, int64_t lo, int64_t hi) {
  int64_t sum = 0;
  auto it = std::lower_bound(merged.begin(), merged.end(), Interval{lo, lo},
                             [](const Interval& x, const Interval& y) { return x.second < y.second; });
  for (; it != merged.end() && it->first < hi; ++it) sum += std::max<int64_t>(0, std::min(hi, it->second) - std::max(lo, it->first));
  return sum;
}

bool is_communication_kernel(std::string_view name) {
  auto has = [&](std::string_view s) { return name.find(s) != std::string_view::npos; };
  return has("nccl") || has("NCCL") || has("rccl") || has("RCCL") || has("all_reduce_kernel") ||
         has("allreduce") || has("AllReduce") || has("all_gather_kernel") || has("reduce_scatter_kernel") ||
         has("cross_device_reduce");
}

namespace {

// Annotations that hold less than this share of the GPU events their CPU steps launched
// are markers. Spans hold all of it (Kineto draws each around its step's correlated work:
// 100% on the four public traces with spans, two H100 and two MI300); the 16-18 us markers
// of tracelens_resnet_ckpt_mi300 hold 9 of 2,685, hta_mi250_toy's 1 ms one 8 of 16.
constexpr double kSpanHeldShare = 0.9;

// Marks each device whose step annotations are markers and gives it the span Kineto draws
// on CUDA: from the start of the first GPU event the CPU steps launched to the end of the
// last. `scopes` holds the annotation spans of the devices that have them.
void find_marker_annotations(const Trace& t, const EventTree& tree, std::map<int32_t, GpuScope>& scopes,
                             const std::map<std::pair<int32_t, int64_t>, Interval>& annotation_of) {
  if (tree.steps().empty()) return;  // no CPU step to compare the annotations with
  // GPU work belongs to the step of its launch (EventTree::step_of); work without a launch
  // in the trace has none.
  const auto launched_in_a_step = [&tree](EventId g) { return tree.launcher(g) != kNoEvent && tree.step_of(g) >= 0; };
  std::map<int32_t, std::pair<int64_t, int64_t>> evidence;  // device -> launched, held
  for (EventId g : tree.gpu_events()) {
    if (!launched_in_a_step(g)) continue;
    const int32_t device = t.track_of(g).device;
    const auto it = annotation_of.find({device, tree.steps()[tree.step_of(g)].number});
    if (it == annotation_of.end()) continue;  // no annotation for that step on this device
    auto& [launched, held] = evidence[device];
    ++launched;
    held += t.ts[g] >= it->second.first && t.ts[g] < it->second.second;
  }
  for (const auto& [device, e] : evidence) {
    if (static_cast<double>(e.second) >= kSpanHeldShare * static_cast<double>(e.first)) continue;
    GpuScope& s = scopes.at(device);
    s.by_launch = true;
    s.begin = INT64_MAX;
    s.end = INT64_MIN;
  }
  for (EventId g : tree.gpu_events()) {
    if (!launched_in_a_step(g)) continue;
    const auto it = scopes.find(t.track_of(g).device);
    if (it == scopes.end() || !it->second.by_launch) continue;
    it->second.begin = std::min(it->second.begin, t.ts[g]);
    it->second.end = std::max(it->second.end, t.end(g));
  }
}

}  // namespace

std::vector<GpuScope> gpu_scopes(const Trace& t, const EventTree& tree) {
  std::map<int32_t, GpuScope> scopes;
  std::map<std::pair<int32_t, int64_t>, Interval> annotation_of;  // (device, step number) -> span
  // GPU-side step annotations first.
  for (EventId e = 0; e < t.size(); ++e) {
    if (t.category[e] != Category::GpuUserAnnotation) continue;
    const int64_t number = profiler_step_number(t.name_of(e));
    if (number < 0) continue;
    const int32_t device = t.track_of(e).device;
    auto [it, inserted] = scopes.try_emplace(device, GpuScope{device, t.ts[e], t.end(e), true});
    if (!inserted) {
      it->second.begin = std::min(it->second.begin, t.ts[e]);
      it->second.end = std::max(it->second.end, t.end(e));
    }
    auto [a, fresh] = annotation_of.try_emplace({device, number}, Interval{t.ts[e], t.end(e)});
    if (!fresh) a->second = {std::min(a->second.first, t.ts[e]), std::max(a->second.second, t.end(e))};
  }
  if (!scopes.empty()) find_marker_annotations(t, tree, scopes, annotation_of);
  // Devices without them: their whole GPU activity.
  std::map<int32_t, GpuScope> spans;
  for (EventId g : tree.gpu_events()) {
    const int32_t device = t.track_of(g).device;
    if (scopes.count(device)) continue;
    auto [it, inserted] = spans.try_emplace(device, GpuScope{device, t.ts[g], t.end(g), false});
    if (!inserted) {
      it->second.begin = std::min(it->second.begin, t.ts[g]);
      it->second.end = std::max(it->second.end, t.end(g));
    }
  }
  scopes.merge(spans);
  std::vector<GpuScope> out;
  for (auto& [d, s] : scopes) out.push_back(s);
  return out;
}

std::vector<EventId> scoped_gpu_events(const Trace& t, const EventTree& tree) {
  const auto scopes = gpu_scopes(t, tree);
  std::vector<EventId> out;
  out.reserve(tree.gpu_events().size());
  for (EventId g : tree.gpu_events()) {
    const int32_t device = t.track_of(g).device;
    for (const auto& s : scopes) {
      if (s.device == device && t.ts[g] >= s.begin && t.ts[g] < s.end) {
        out.push_back(g);
        break;
      }
    }
  }
  return out;
}

namespace {

std::vector<GpuTimeline> timeline_over(const Trace& t, const EventTree& tree, const std::vector<GpuScope>& scopes) {
  struct Sets {
    std::vector<Interval> all, compute, comm, copy;
  };
  std::vector<GpuTimeline> out;
  NameClassifier names(t);
  for (const GpuScope& scope : scopes) {
    Sets s;
    for (EventId e : tree.gpu_events()) {
      if (t.track_of(e).device != scope.device) continue;
      const Interval iv{std::max(t.ts[e], scope.begin), std::min(t.end(e), scope.end)};
      if (iv.second <= iv.first) continue;
      s.all.push_back(iv);
      const Category c = t.category[e];
      if (c == Category::GpuMemcpy) {
        s.copy.push_back(iv);
      } else if (c == Category::Kernel && names.communication(t.name[e])) {
        s.comm.push_back(iv);
      } else {
        s.compute.push_back(iv);
      }
    }
    GpuTimeline g;
    g.device = scope.device;
    g.from_steps = scope.from_steps;
    g.by_launch = scope.by_launch;
    const auto all = merge_intervals(std::move(s.all));
    const auto compute = merge_intervals(std::move(s.compute));
    const auto comm = merge_intervals(std::move(s.comm));
    const auto copy = merge_intervals(std::move(s.copy));
    g.begin = scope.begin;
    g.end = scope.end;
    g.total = g.end - g.begin;
    g.busy = total_length(all);
    g.idle = g.total - g.busy;
    g.computation = total_length(compute);
    g.communication = total_length(comm);
    g.exposed_communication = subtract_length(comm, compute);
    g.memcpy = total_length(copy);
    std::vector<Interval> compute_or_comm = compute;
    compute_or_comm.insert(compute_or_comm.end(), comm.begin(), comm.end());
    g.exposed_memcpy = subtract_length(copy, merge_intervals(std::move(compute_or_comm)));
    out.push_back(g);
  }
  return out;
}

}  // namespace

std::vector<GpuTimeline> gpu_timeline(const Trace& t, const EventTree& tree) { return timeline_over(t, tree, gpu_scopes(t, tree)); }

std::vector<GpuTimeline> gpu_timeline(const Trace& t, const EventTree& tree, int64_t begin, int64_t end) {
  std::vector<GpuScope> scopes = gpu_scopes(t, tree);
  for (GpuScope& s : scopes) s = {s.device, begin, end, true};
  return timeline_over(t, tree, scopes);
}

}  // namespace ttap
