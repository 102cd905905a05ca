#include "ttap/tree.hpp"

#include <functional>

#include <algorithm>
#include <charconv>

namespace ttap {

namespace {

constexpr int64_t kRoundingSlackNs = 1000;

// Among events with the same start and duration, the caller encloses the callee: a
// Python frame calls the op, an op calls the runtime.
int nesting_rank(Category c) {
  switch (c) {
    case Category::PythonFunction: return 0;
    case Category::UserAnnotation:
    case Category::DataLoader: return 1;
    case Category::CudaRuntime:
    case Category::CudaDriver: return 3;
    default: return 2;
  }
}

bool nests_on_cpu(const Trace& t, EventId e) {
  const Category c = t.category[e];
  return t.phase[e] == Phase::Complete && !is_gpu_activity(c) && c != Category::GpuUserAnnotation &&
         c != Category::CudaSync && c != Category::TraceSpan && !t.tracks[t.track[e]].gpu;
}

// Profilers write each thread's events almost in start order (a few dozen descents in
// tens of thousands of events): merging the ascending runs beats a full sort.
template <typename T, typename Less>
void sort_nearly_sorted(std::vector<T>& v, Less less) {
  std::vector<size_t> runs{0};
  for (size_t i = 1; i < v.size(); ++i)
    if (less(v[i], v[i - 1])) runs.push_back(i);
  if (runs.size() == 1) return;
  if (runs.size() > v.size() / 8) {
    std::sort(v.begin(), v.end(), less);
    return;
  }
  runs.push_back(v.size());
  while (runs.size() > 2) {
    std::vector<size_t> merged{0};
    for (size_t r = 0; r + 2 < runs.size(); r += 2) {
      std::inplace_merge(v.begin() + static_cast<std::ptrdiff_t>(runs[r]), v.begin() + static_cast<std::ptrdiff_t>(runs[r + 1]),
                         v.begin() + static_cast<std::ptrdiff_t>(runs[r + 2]), less);
      merged.push_back(runs[r + 2]);
    }
    if (runs.size() % 2 == 0) merged.push_back(runs.back());  // an odd run out waits a round
    runs.swap(merged);
  }
}

template <typename Key>
std::vector<std::pair<Key, EventId>> sorted_pairs(std::vector<std::pair<Key, EventId>> v) {
  std::sort(v.begin(), v.end());
  return v;
}

template <typename Key>
EventId lookup(const std::vector<std::pair<Key, EventId>>& sorted, Key key) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), std::pair<Key, EventId>{key, 0});
  return it != sorted.end() && it->first == key ? it->second : kNoEvent;
}

}  // namespace

int64_t profiler_step_number(std::string_view name) {
  constexpr std::string_view prefix = "ProfilerStep#";
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) return -1;
  int64_t n = -1;
  const char* first = name.data() + prefix.size();
  const char* last = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(first, last, n);
  if (ec != std::errc() || ptr != last) return -1;
  return n;
}

EventTree EventTree::build(const Trace& t) {
  EventTree tree;
  const size_t n = t.size();
  tree.parent_.assign(n, kNoEvent);
  tree.depth_.assign(n, 0);
  tree.in_tree_.assign(n, 0);
  tree.launcher_.assign(n, kNoEvent);
  tree.owner_op_.assign(n, kNoEvent);
  tree.python_parent_.assign(n, kNoEvent);
  tree.step_of_.assign(n, -1);
  tree.roots_.assign(t.tracks.size(), {});
  tree.gpu_events_.assign(t.tracks.size(), {});

  // 1. Bucket events by track.
  std::vector<std::vector<EventId>> cpu_by_track(t.tracks.size());
  for (EventId e = 0; e < n; ++e) {
    if (is_gpu_activity(t.category[e])) {
      tree.gpu_events_[t.track[e]].push_back(e);
      tree.in_tree_[e] = 1;
    } else if (nests_on_cpu(t, e)) {
      cpu_by_track[t.track[e]].push_back(e);
      tree.in_tree_[e] = 1;
    }
  }

  // 2. CPU nesting by time containment, one stack per thread.
  StoreVector<EventId> nearest_op(n, kNoEvent);  // innermost cpu_op at or above an event
  std::vector<EventId> order;                    // all CPU events, parents before children
  order.reserve(n);
  std::vector<EventId> stack;
  for (size_t track = 0; track < cpu_by_track.size(); ++track) {
    auto& events = cpu_by_track[track];
    auto before = [&t](EventId a, EventId b) {
      if (t.ts[a] != t.ts[b]) return t.ts[a] < t.ts[b];
      if (t.dur[a] != t.dur[b]) return t.dur[a] > t.dur[b];
      const int ra = nesting_rank(t.category[a]), rb = nesting_rank(t.category[b]);
      if (ra != rb) return ra < rb;
      return a < b;
    };
    sort_nearly_sorted(events, before);
    stack.clear();
    for (EventId e : events) {
      while (!stack.empty() && t.ts[e] >= t.end(stack.back())) stack.pop_back();
      // A partial overlap: e starts inside the top but ends after it. Within a microsecond
      // it is rounding (the 2021 schema's resolution) and e stays the top's child; beyond,
      // e belongs to the first ancestor that contains it (a ProfilerStep annotation that
      // starts inside record_function's enter call, for one).
      bool partial = false;
      while (!stack.empty() && t.end(e) > t.end(stack.back()) + kRoundingSlackNs) {
        partial = true;
        stack.pop_back();
      }
      if (partial || (!stack.empty() && t.end(e) > t.end(stack.back()))) ++tree.diagnostics_.partial_overlaps;
      if (stack.empty()) {
        tree.roots_[track].push_back(e);
      } else {
        const EventId p = stack.back();
        tree.parent_[e] = p;
        tree.depth_[e] = tree.depth_[p] + 1;
      }
      const EventId p = tree.parent_[e];
      nearest_op[e] = t.category[e] == Category::CpuOp ? e : (p == kNoEvent ? kNoEvent : nearest_op[p]);
      stack.push_back(e);
      order.push_back(e);
    }
  }

  // 3. Launch -> GPU work, by correlation id.
  std::vector<std::pair<int64_t, EventId>> launches;
  for (EventId e = 0; e < n; ++e) {
    if (is_launch(t.category[e]) && t.correlation[e] != kNoId) launches.emplace_back(t.correlation[e], e);
  }
  // Correlation ids grow through a trace: nearly sorted already. Where they are dense (a
  // single profiling session), a direct table replaces the binary search.
  sort_nearly_sorted(launches, std::less<>());
  const int64_t corr_lo = launches.empty() ? 0 : launches.front().first;
  const int64_t corr_span = launches.empty() ? 0 : launches.back().first - corr_lo + 1;
  StoreVector<EventId> by_correlation;
  if (!launches.empty() && corr_span <= static_cast<int64_t>(launches.size()) * 4 + 1024) {
    by_correlation.assign(static_cast<size_t>(corr_span), kNoEvent);
    for (auto it = launches.rbegin(); it != launches.rend(); ++it) by_correlation[it->first - corr_lo] = it->second;
  }
  auto launch_of = [&](int64_t corr) {
    if (corr == kNoId) return kNoEvent;
    if (by_correlation.empty()) return lookup(launches, corr);
    const int64_t i = corr - corr_lo;
    return i >= 0 && i < corr_span ? by_correlation[static_cast<size_t>(i)] : kNoEvent;
  };
  std::vector<bool> launched_something(n, false);
  auto by_start = [&t](EventId a, EventId b) { return t.ts[a] != t.ts[b] ? t.ts[a] < t.ts[b] : a < b; };
  for (auto& per_track : tree.gpu_events_) {
    sort_nearly_sorted(per_track, by_start);
    for (EventId g : per_track) {
      tree.all_gpu_.push_back(g);
      const EventId l = launch_of(t.correlation[g]);
      if (l == kNoEvent) {
        ++tree.diagnostics_.gpu_without_launch;
        continue;
      }
      tree.launcher_[g] = l;
      tree.parent_[g] = l;
      tree.depth_[g] = tree.depth_[l] + 1;
      launched_something[l] = true;
      const EventId lp = tree.parent_[l];
      tree.owner_op_[g] = lp == kNoEvent ? kNoEvent : nearest_op[lp];
    }
  }
  sort_nearly_sorted(tree.all_gpu_, by_start);  // one sorted run per GPU track
  std::vector<int8_t> launches_work(t.strings.size(), -1);  // per name: a launch/copy/set call?
  for (auto [corr, l] : launches) {
    if (launched_something[l]) continue;
    int8_t& known = launches_work[t.name[l]];
    if (known < 0) {
      const std::string_view name = t.name_of(l);
      known = name.find("Launch") != std::string_view::npos || name.find("Memcpy") != std::string_view::npos ||
              name.find("Memset") != std::string_view::npos;
    }
    if (known) ++tree.diagnostics_.launches_without_gpu;
  }

  // 4. Children lists (CSR), parents' children in start order: CPU first, then GPU.
  tree.child_begin_.assign(n + 1, 0);
  for (EventId e = 0; e < n; ++e) {
    if (tree.parent_[e] != kNoEvent) ++tree.child_begin_[tree.parent_[e] + 1];
  }
  for (size_t i = 0; i < n; ++i) tree.child_begin_[i + 1] += tree.child_begin_[i];
  tree.children_.resize(tree.child_begin_[n]);
  StoreVector<uint32_t> fill(tree.child_begin_.begin(), tree.child_begin_.end() - 1);
  for (EventId e : order) {
    if (tree.parent_[e] != kNoEvent) tree.children_[fill[tree.parent_[e]]++] = e;
  }
  for (EventId g : tree.all_gpu_) {
    if (tree.parent_[g] != kNoEvent) tree.children_[fill[tree.parent_[g]]++] = g;
  }

  // 5. Python frames -> parent frames.
  std::vector<std::pair<int64_t, EventId>> python_ids;
  for (EventId e = 0; e < n; ++e) {
    if (const PythonArgs* p = t.python(e); p && p->python_id != kNoId) python_ids.emplace_back(p->python_id, e);
  }
  python_ids = sorted_pairs(std::move(python_ids));
  for (auto [id, e] : python_ids) {
    const PythonArgs* p = t.python(e);
    if (p->parent_id == kNoId) continue;
    const EventId parent = lookup(python_ids, p->parent_id);
    if (parent == kNoEvent) ++tree.diagnostics_.python_without_parent;
    tree.python_parent_[e] = parent;
  }

  // 6. Steps: ProfilerStep#N spans on CPU threads; events belong to the step they start in.
  for (EventId e : order) {
    const int64_t number = profiler_step_number(t.name_of(e));
    if (number >= 0) tree.steps_.push_back({e, number, t.ts[e], t.end(e)});
  }
  std::sort(tree.steps_.begin(), tree.steps_.end(), [](const Step& a, const Step& b) { return a.ts < b.ts; });
  if (!tree.steps_.empty()) {
    auto step_at = [&tree](int64_t ts) -> int32_t {
      auto it = std::upper_bound(tree.steps_.begin(), tree.steps_.end(), ts,
                                 [](int64_t v, const Step& s) { return v < s.ts; });
      if (it == tree.steps_.begin()) return -1;
      --it;
      return ts < it->end ? static_cast<int32_t>(it - tree.steps_.begin()) : -1;
    };
    for (EventId e : order) tree.step_of_[e] = step_at(t.ts[e]);
    for (EventId g : tree.all_gpu_) {
      const EventId l = tree.launcher_[g];
      tree.step_of_[g] = l != kNoEvent ? tree.step_of_[l] : step_at(t.ts[g]);
    }
  }
  return tree;
}

std::vector<EventId> EventTree::path_to_root(EventId e) const {
  std::vector<EventId> path;
  for (EventId cur = e; cur != kNoEvent && path.size() <= parent_.size(); cur = parent_[cur]) path.push_back(cur);
  return path;
}

}  // namespace ttap
