// Per-event and per-window features (docs/features.md is the specification; keep the two
// in step and bump kFeatureVersion when a column changes meaning).
#include "ttap/features.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "ttap/analyze.hpp"

namespace ttap {

const std::vector<std::string>& numeric_feature_names() {
  static const std::vector<std::string> names{"log_dur", "log_launch_delay", "rel_start", "log_gap",
                                              "depth",   "is_gpu",           "log_bytes", "dur_share"};
  return names;
}

const std::vector<std::string>& window_stat_names() {
  static const std::vector<std::string> names{"gpu_busy",     "cpu_busy",     "log_events",        "log_kernels",
                                              "log_launches", "memcpy_share", "max_gpu_gap_share", "log_mean_kernel_us"};
  return names;
}

namespace {

float log_us(int64_t ns) { return static_cast<float>(std::log1p(std::max<double>(0.0, static_cast<double>(ns) / 1000.0))); }

// Slots 1-8: GPU streams by (device, stream); 9-16: CPU threads, busiest first. A model
// needs a small fixed vocabulary, and the busiest threads are the ones that matter.
std::vector<int32_t> track_slots(const Trace& t, const std::vector<Window>& windows) {
  std::vector<int64_t> count(t.tracks.size(), 0);
  for (const Window& w : windows)
    for (EventId e : w.events) ++count[t.track[e]];
  std::vector<TrackId> gpu, cpu;
  for (TrackId k = 0; k < t.tracks.size(); ++k) {
    if (count[k] == 0) continue;
    (t.tracks[k].gpu ? gpu : cpu).push_back(k);
  }
  std::sort(gpu.begin(), gpu.end(), [&](TrackId a, TrackId b) {
    const Track &x = t.tracks[a], &y = t.tracks[b];
    return std::tie(x.device, x.stream, a) < std::tie(y.device, y.stream, b);
  });
  std::sort(cpu.begin(), cpu.end(), [&](TrackId a, TrackId b) { return count[a] != count[b] ? count[a] > count[b] : a < b; });
  std::vector<int32_t> slot(t.tracks.size(), 0);
  constexpr int32_t kHalf = kTrackSlots / 2;
  for (size_t i = 0; i < gpu.size(); ++i) slot[gpu[i]] = 1 + std::min<int32_t>(static_cast<int32_t>(i), kHalf - 1);
  for (size_t i = 0; i < cpu.size(); ++i) slot[cpu[i]] = kHalf + 1 + std::min<int32_t>(static_cast<int32_t>(i), kHalf - 1);
  return slot;
}

// GPU start minus launch start: how long the work waited in the queue plus launch cost.
int64_t launch_delay(const Trace& t, const EventTree& tree, EventId e) {
  if (is_gpu_activity(t.category[e])) {
    const EventId l = tree.launcher(e);
    return l == kNoEvent ? 0 : std::max<int64_t>(0, t.ts[e] - t.ts[l]);
  }
  if (is_launch(t.category[e])) {
    int64_t first = -1;
    for (EventId c : tree.children(e))
      if (is_gpu_activity(t.category[c]) && (first < 0 || t.ts[c] < first)) first = t.ts[c];
    return first < 0 ? 0 : std::max<int64_t>(0, first - t.ts[e]);
  }
  return 0;
}

uint32_t depth_of(const EventTree& tree, const Trace& t, EventId e) {
  if (is_gpu_activity(t.category[e])) {
    const EventId l = tree.launcher(e);
    return l == kNoEvent ? 0 : tree.depth(l) + 1;
  }
  return tree.depth(e);
}

int64_t longest_gap(const std::vector<Interval>& merged, int64_t lo, int64_t hi) {
  auto it = std::lower_bound(merged.begin(), merged.end(), Interval{lo, lo},
                             [](const Interval& x, const Interval& y) { return x.second < y.second; });
  int64_t cursor = lo, best = 0;
  for (; it != merged.end() && it->first < hi; ++it) {
    best = std::max(best, std::max<int64_t>(0, it->first - cursor));
    cursor = std::max(cursor, it->second);
  }
  return std::max(best, hi - std::min(cursor, hi));
}

}  // namespace

FeatureBatch compute_features(const Trace& t, const EventTree& tree, const std::vector<Window>& windows,
                              const WindowOptions& options, const NameEncoder& encode) {
  FeatureBatch b;
  const int64_t W = static_cast<int64_t>(windows.size());
  const int64_t E = std::max(1, options.max_events);
  b.windows = W;
  b.events = E;
  b.event_name.assign(static_cast<size_t>(W * E), 0);
  b.event_kind.assign(static_cast<size_t>(W * E), 0);
  b.event_opcat.assign(static_cast<size_t>(W * E), 0);
  b.event_track.assign(static_cast<size_t>(W * E), 0);
  b.event_numeric.assign(static_cast<size_t>(W * E * kNumericFeatures), 0.0f);
  b.event_mask.assign(static_cast<size_t>(W * E), 0);
  b.window_stats.assign(static_cast<size_t>(W * kWindowStats), 0.0f);
  b.window_bounds.assign(static_cast<size_t>(W * 2), 0.0);
  b.name_tokens.assign(kMaxNameTokens, 0);  // row 0: the padding name

  const std::vector<int32_t> slot = track_slots(t, windows);
  NameClassifier classify(t);
  std::unordered_map<StringId, int32_t> name_row;

  // Interval unions for the window statistics, over all activity (not only kept events).
  std::vector<Interval> gpu, copies, cpu_roots;
  for (EventId g : tree.gpu_events()) {
    gpu.emplace_back(t.ts[g], t.end(g));
    if (t.category[g] == Category::GpuMemcpy) copies.emplace_back(t.ts[g], t.end(g));
  }
  for (const auto& roots : tree.roots_by_track())
    for (EventId r : roots)
      if (is_cpu_side(t.category[r])) cpu_roots.emplace_back(t.ts[r], t.end(r));
  gpu = merge_intervals(std::move(gpu));
  copies = merge_intervals(std::move(copies));
  cpu_roots = merge_intervals(std::move(cpu_roots));

  std::unordered_map<TrackId, int64_t> track_end;
  for (int64_t w = 0; w < W; ++w) {
    const Window& win = windows[static_cast<size_t>(w)];
    const int64_t wdur = std::max<int64_t>(1, win.end - win.begin);
    b.window_bounds[static_cast<size_t>(2 * w)] = to_us(win.begin);
    b.window_bounds[static_cast<size_t>(2 * w + 1)] = to_us(win.end);
    track_end.clear();
    int64_t kernels = 0, launches = 0, kernel_time = 0;
    for (size_t k = 0; k < win.events.size() && static_cast<int64_t>(k) < E; ++k) {
      const EventId e = win.events[k];
      const size_t at = static_cast<size_t>(w * E) + k;
      const Category c = t.category[e];
      auto [it, fresh] = name_row.try_emplace(t.name[e], static_cast<int32_t>(name_row.size() + 1));
      if (fresh) {
        std::vector<int> ids = encode(normalize_event_name(t.name_of(e)));
        ids.resize(kMaxNameTokens, -1);
        for (int id : ids) b.name_tokens.push_back(id + 1);
      }
      b.event_name[at] = it->second;
      b.event_kind[at] = static_cast<int32_t>(c) + 1;
      if (is_gpu_activity(c)) b.event_opcat[at] = static_cast<int32_t>(classify.gpu_category(tree, e)) + 1;
      else if (c == Category::CpuOp) b.event_opcat[at] = static_cast<int32_t>(classify.op_category(t.name[e])) + 1;
      b.event_track[at] = slot[t.track[e]];
      b.event_mask[at] = 1;

      const int64_t prev_end = track_end.count(t.track[e]) ? track_end[t.track[e]] : win.begin;
      track_end[t.track[e]] = std::max(prev_end, t.end(e));
      const CopyArgs* copy = t.copy(e);
      float* num = &b.event_numeric[at * kNumericFeatures];
      num[0] = log_us(t.dur[e]);
      num[1] = log_us(launch_delay(t, tree, e));
      num[2] = static_cast<float>(static_cast<double>(t.ts[e] - win.begin) / static_cast<double>(wdur));
      num[3] = log_us(t.ts[e] - prev_end);
      num[4] = static_cast<float>(depth_of(tree, t, e)) / 8.0f;
      num[5] = (is_gpu_activity(c) || c == Category::CudaSync) ? 1.0f : 0.0f;
      num[6] = copy && copy->bytes > 0 ? static_cast<float>(std::log1p(static_cast<double>(copy->bytes)) / 20.0) : 0.0f;
      num[7] = static_cast<float>(std::min(1.0, static_cast<double>(t.dur[e]) / static_cast<double>(wdur)));
    }
    // Counts over every candidate, not only the kept ones.
    for (EventId e : win.events) {
      if (t.category[e] == Category::Kernel) {
        ++kernels;
        kernel_time += t.dur[e];
      }
      if (is_launch(t.category[e]) && !tree.children(e).empty()) ++launches;
    }
    float* st = &b.window_stats[static_cast<size_t>(w * kWindowStats)];
    const double d = static_cast<double>(wdur);
    st[0] = static_cast<float>(clipped_length(gpu, win.begin, win.end) / d);
    st[1] = static_cast<float>(clipped_length(cpu_roots, win.begin, win.end) / d);
    st[2] = static_cast<float>(std::log1p(static_cast<double>(win.candidates)));
    st[3] = static_cast<float>(std::log1p(static_cast<double>(kernels)));
    st[4] = static_cast<float>(std::log1p(static_cast<double>(launches)));
    st[5] = static_cast<float>(clipped_length(copies, win.begin, win.end) / d);
    st[6] = static_cast<float>(longest_gap(gpu, win.begin, win.end) / d);
    st[7] = kernels > 0 ? log_us(kernel_time / kernels) : 0.0f;
  }
  b.names = static_cast<int64_t>(name_row.size() + 1);
  return b;
}

}  // namespace ttap
