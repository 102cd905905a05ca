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

std::vector<GpuTimeline> gpu_timeline(const Trace& t, const EventTree& tree) {
  struct Sets {
    std::vector<Interval> all, compute, comm, copy;
  };
  std::map<int32_t, Sets> by_device;
  for (EventId e : tree.gpu_events()) {
    const int32_t device = t.track_of(e).device;
    Sets& s = by_device[device];
    const Interval iv{t.ts[e], t.end(e)};
    s.all.push_back(iv);
    const Category c = t.category[e];
    if (c == Category::GpuMemcpy) {
      s.copy.push_back(iv);
    } else if (c == Category::Kernel && is_communication_kernel(t.name_of(e))) {
      s.comm.push_back(iv);
    } else {
      s.compute.push_back(iv);
    }
  }
  std::vector<GpuTimeline> out;
  for (auto& [device, s] : by_device) {
    GpuTimeline g;
    g.device = device;
    const auto all = merge_intervals(std::move(s.all));
    const auto compute = merge_intervals(std::move(s.compute));
    const auto comm = merge_intervals(std::move(s.comm));
    const auto copy = merge_intervals(std::move(s.copy));
    g.begin = all.empty() ? 0 : all.front().first;
    g.end = all.empty() ? 0 : all.back().second;
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

}  // namespace ttap
