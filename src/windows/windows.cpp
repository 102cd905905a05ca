// The steady state and its windows (include/ttap/windows.hpp, docs/features.md).
#include "ttap/windows.hpp"

#include <algorithm>
#include <limits>

namespace ttap {

namespace {

// Events a window may hold: the work that happened, not markers about it. Instants carry
// no duration, GPU-side annotations duplicate the CPU ones, and the profiler's own spans
// (Trace, overhead) say nothing about the program.
bool is_window_candidate(const Trace& t, const EventTree& tree, EventId e) {
  const Category c = t.category[e];
  if (t.phase[e] != Phase::Complete) return false;
  if (is_gpu_activity(c) || c == Category::CudaSync) return true;
  return is_cpu_side(c) && tree.in_tree(e);
}

// Selection classes: lower is kept first when a window overflows.
enum : uint8_t { kGpuWork = 0, kLaunch = 1, kLaunchOwner = 2, kOther = 3 };

}  // namespace

SteadyState steady_state(const Trace& t, const EventTree& tree) {
  SteadyState s;
  if (!tree.steps().empty()) {
    s.begin = std::numeric_limits<int64_t>::max();
    s.end = std::numeric_limits<int64_t>::min();
    for (const Step& step : tree.steps()) {
      s.begin = std::min(s.begin, step.ts);
      s.end = std::max(s.end, step.end);
    }
    s.source = "steps";
    return s;
  }
  auto span_of = [&](auto&& keep) {
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (EventId e = 0; e < t.size(); ++e) {
      if (!keep(e)) continue;
      lo = std::min(lo, t.ts[e]);
      hi = std::max(hi, t.end(e));
    }
    return std::pair{lo, hi};
  };
  auto [glo, ghi] = span_of([&](EventId e) { return is_gpu_activity(t.category[e]); });
  if (glo < ghi) return {glo, ghi, "gpu"};
  auto [clo, chi] = span_of([&](EventId e) { return is_window_candidate(t, tree, e); });
  if (clo < chi) return {clo, chi, "cpu"};
  return {0, 0, "empty"};
}

std::vector<Window> make_windows(const Trace& t, const EventTree& tree, const WindowOptions& options) {
  std::vector<Window> windows;
  const SteadyState s = steady_state(t, tree);
  const int count = std::max(1, options.count);
  const size_t cap = static_cast<size_t>(std::max(1, options.max_events));
  if (s.end <= s.begin) return windows;

  // Boundaries split the span as evenly as integer nanoseconds allow.
  const int64_t span = s.end - s.begin;
  windows.resize(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    Window& w = windows[static_cast<size_t>(i)];
    w.index = static_cast<uint32_t>(i);
    w.begin = s.begin + static_cast<int64_t>(static_cast<__int128>(span) * i / count);
    w.end = s.begin + static_cast<int64_t>(static_cast<__int128>(span) * (i + 1) / count);
  }

  // Which CPU events matter to the GPU: the launch calls and the ops that own them.
  std::vector<uint8_t> klass(t.size(), kOther);
  for (EventId g : tree.gpu_events()) {
    klass[g] = kGpuWork;
    if (EventId l = tree.launcher(g); l != kNoEvent) klass[l] = std::min<uint8_t>(klass[l], kLaunch);
    if (EventId o = tree.owner_op(g); o != kNoEvent) klass[o] = std::min<uint8_t>(klass[o], kLaunchOwner);
  }
  for (EventId e = 0; e < t.size(); ++e)
    if (t.category[e] == Category::CudaSync) klass[e] = kGpuWork;

  // Windows all have the same duration except for rounding, so the index follows from
  // the start; the comparisons below settle the rounding at the edges.
  for (EventId e = 0; e < t.size(); ++e) {
    if (t.ts[e] < s.begin || t.ts[e] >= s.end || !is_window_candidate(t, tree, e)) continue;
    size_t i = static_cast<size_t>(static_cast<__int128>(t.ts[e] - s.begin) * count / span);
    i = std::min(i, windows.size() - 1);
    while (i > 0 && t.ts[e] < windows[i].begin) --i;
    while (i + 1 < windows.size() && t.ts[e] >= windows[i].end) ++i;
    windows[i].events.push_back(e);
  }

  auto by_start = [&](EventId a, EventId b) { return t.ts[a] != t.ts[b] ? t.ts[a] < t.ts[b] : a < b; };
  for (Window& w : windows) {
    w.candidates = static_cast<uint32_t>(w.events.size());
    if (w.events.size() > cap) {
      auto keep_first = [&](EventId a, EventId b) {
        if (klass[a] != klass[b]) return klass[a] < klass[b];
        if (t.dur[a] != t.dur[b]) return t.dur[a] > t.dur[b];
        return by_start(a, b);
      };
      std::nth_element(w.events.begin(), w.events.begin() + static_cast<std::ptrdiff_t>(cap), w.events.end(), keep_first);
      w.events.resize(cap);
    }
    std::sort(w.events.begin(), w.events.end(), by_start);
  }
  return windows;
}

}  // namespace ttap
