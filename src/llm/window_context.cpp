// The condensed picture of one time window the model reads: what the GPU did and did not
// do, how kernels were launched, the longest events and the call paths above them. Every
// section has a line budget, so a window of a million events still makes a bounded prompt.
#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "text_format.hpp"
#include "ttap/analyze.hpp"
#include "ttap/llm.hpp"

namespace ttap {

namespace {

using llm::append_line;
using llm::clip;
using llm::duration_text;
using llm::offset_text;

constexpr size_t kNameChars = 110;        // longest event name shown
constexpr size_t kTopGpu = 10;            // longest GPU events listed
constexpr size_t kTopCpu = 12;            // longest CPU events listed
constexpr size_t kTopOpsByCount = 10;     // most frequent CPU ops listed
constexpr size_t kPaths = 5;              // call paths shown
constexpr size_t kPathDepth = 8;          // frames per call path (closest to the event)
constexpr size_t kTreeLines = 40;         // tree excerpt lines
constexpr uint32_t kTreeDepth = 6;        // tree excerpt depth below the roots
constexpr double kTreeMinShare = 0.02;    // tree excerpt: children below 2% of the window are summed up
// GPU work that started before the window but still runs inside it: looked for among the
// events just before it (activity is sorted by start; a stream runs one kernel at a time).
constexpr size_t kLookBack = 256;

int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) { return std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0)); }

std::string_view kind_of(const Trace& t, EventId e) {
  switch (t.category[e]) {
    case Category::Kernel: return "kernel";
    case Category::GpuMemcpy: return "memcpy";
    case Category::GpuMemset: return "memset";
    case Category::CpuOp: return "cpu_op";
    case Category::CudaRuntime: return "runtime";
    case Category::CudaDriver: return "driver";
    case Category::UserAnnotation: return "annotation";
    case Category::PythonFunction: return "python";
    case Category::DataLoader: return "dataloader";
    default: return category_name(t.category[e]);
  }
}

struct Percentiles {
  int64_t p50 = 0, p95 = 0, max = 0;
};
Percentiles percentiles(std::vector<int64_t> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  p.p50 = v[v.size() / 2];
  p.p95 = v[std::min(v.size() - 1, v.size() * 95 / 100)];
  p.max = v.back();
  return p;
}

// GPU activity overlapping [begin, end), by start.
std::vector<EventId> gpu_in_window(const Trace& t, const EventTree& tree, int64_t begin, int64_t end) {
  const auto& all = tree.gpu_events();
  auto first = std::lower_bound(all.begin(), all.end(), begin, [&](EventId e, int64_t v) { return t.ts[e] < v; });
  std::vector<EventId> out;
  for (auto it = first; it != all.begin() && static_cast<size_t>(first - it) < kLookBack;) {
    --it;
    if (t.end(*it) > begin) out.push_back(*it);
  }
  std::reverse(out.begin(), out.end());
  for (auto it = first; it != all.end() && t.ts[*it] < end; ++it) out.push_back(*it);
  return out;
}

// CPU events overlapping [begin, end) on every thread, parents before children.
std::vector<EventId> cpu_in_window(const Trace& t, const EventTree& tree, int64_t begin, int64_t end,
                                   std::vector<EventId>* roots_out) {
  std::vector<EventId> out;
  std::vector<EventId> stack;
  for (const auto& roots : tree.roots_by_track()) {
    if (roots.empty()) continue;
    // Roots of a thread do not nest, so the first overlapping one is at or just before the
    // first root starting at `begin`.
    auto it = std::lower_bound(roots.begin(), roots.end(), begin, [&](EventId e, int64_t v) { return t.ts[e] < v; });
    if (it != roots.begin()) --it;
    for (; it != roots.end() && t.ts[*it] < end; ++it) {
      if (t.end(*it) <= begin) continue;
      if (roots_out) roots_out->push_back(*it);
      stack.push_back(*it);
      while (!stack.empty()) {
        const EventId e = stack.back();
        stack.pop_back();
        if (!is_cpu_side(t.category[e])) continue;
        out.push_back(e);
        const auto kids = tree.children(e);
        for (auto k = kids.rbegin(); k != kids.rend(); ++k)
          if (t.ts[*k] < end && t.end(*k) > begin) stack.push_back(*k);
      }
    }
  }
  return out;
}

std::string event_line(const Trace& t, const EventTree& tree, EventId e, int64_t begin, int64_t end, int64_t origin) {
  std::string line = fmt::format("  {:>11}  {:<10} {}", duration_text(t.dur[e]), kind_of(t, e), clip(t.name_of(e), kNameChars));
  line += fmt::format("  (at {}", offset_text(t.ts[e], origin));
  if (t.ts[e] < begin || t.end(e) > end) line += ", crosses the window edge";
  if (is_gpu_activity(t.category[e])) {
    line += fmt::format(", stream {}", t.track_of(e).stream);
    const EventId launch = tree.launcher(e);
    if (launch != kNoEvent) line += fmt::format(", launch delay {}", duration_text(t.ts[e] - t.ts[launch]));
    const EventId op = tree.owner_op(e);
    if (op != kNoEvent) line += fmt::format(", from {}", clip(t.name_of(op), 60));
    if (const CopyArgs* copy = t.copy(e); copy && copy->bytes >= 0) line += fmt::format(", {} bytes", copy->bytes);
  }
  line += ')';
  return line;
}

// "a > b > c": the event's ancestors, outermost first, the closest kPathDepth of them.
std::string call_path(const Trace& t, const EventTree& tree, EventId e) {
  std::vector<EventId> chain = tree.path_to_root(e);
  std::string out = chain.size() > kPathDepth ? "... > " : "";
  const size_t shown = std::min(chain.size(), kPathDepth);
  for (size_t i = shown; i-- > 0;) {
    out += clip(t.name_of(chain[i]), 70);
    if (i) out += " > ";
  }
  return out;
}

void tree_excerpt(const Trace& t, const EventTree& tree, EventId e, uint32_t depth, int64_t begin, int64_t end,
                  std::string& out, size_t& lines) {
  if (lines >= kTreeLines) return;
  const int64_t span = end - begin;
  std::vector<EventId> shown;
  int64_t hidden = 0;
  size_t hidden_count = 0;
  for (EventId k : tree.children(e)) {
    if (t.ts[k] >= end || t.end(k) <= begin) continue;
    if (is_gpu_activity(t.category[k]) ||
        overlap(t.ts[k], t.end(k), begin, end) < static_cast<int64_t>(kTreeMinShare * span)) {
      // GPU work is listed elsewhere; short children are summed so the excerpt stays short.
      hidden += t.dur[k];
      ++hidden_count;
    } else {
      shown.push_back(k);
    }
  }
  // Python frames that only call one thing (interpreter and wrapper chains) and nn.Module's
  // call machinery take no line: the nn.Module frames and forward()s say the same, shorter.
  const std::string_view name = t.name_of(e);
  const bool python = t.category[e] == Category::PythonFunction;
  if (python && !name.starts_with("nn.Module: ") &&
      ((shown.size() == 1 && hidden_count == 0) || name.ends_with("_call_impl"))) {
    for (EventId k : shown) {
      if (lines >= kTreeLines) return;
      tree_excerpt(t, tree, k, depth, begin, end, out, lines);
    }
    if (hidden_count && lines < kTreeLines) {
      ++lines;
      append_line(out,
                  fmt::format("  {}({} shorter children or GPU activity, {} in all)", std::string(2 * depth, ' '),
                              hidden_count, duration_text(hidden)),
                  SIZE_MAX);
    }
    return;
  }
  const int64_t shown_dur = overlap(t.ts[e], t.end(e), begin, end);
  ++lines;
  append_line(out,
              fmt::format("  {}{} [{}{}]", std::string(2 * depth, ' '), clip(t.name_of(e), kNameChars),
                          duration_text(t.dur[e]), shown_dur < t.dur[e] ? ", partly outside" : ""),
              SIZE_MAX);
  if (depth >= kTreeDepth) return;
  for (EventId k : shown) {
    if (lines >= kTreeLines) return;
    tree_excerpt(t, tree, k, depth + 1, begin, end, out, lines);
  }
  if (hidden_count && lines < kTreeLines) {
    ++lines;
    append_line(out,
                fmt::format("  {}({} shorter children or GPU activity, {} in all)", std::string(2 * (depth + 1), ' '),
                            hidden_count, duration_text(hidden)),
                SIZE_MAX);
  }
}


// Host time inside the steps that overlap [begin, end) during which no op, runtime call or
// DataLoader span ran on any thread of the step's process: code the profiler records
// only as Python frames or not at all (Python overhead, preprocessing, I/O, sleeps). It
// is what a starved GPU waits for, and on a CPU-only run it is the step's time outside the
// model. Annotations and Python frames do not count as covering it: they wrap everything.
struct UntracedHost {
  int64_t window = 0, window_step = 0;  // in the window: untraced time, step time
  int64_t steps = 0, steps_total = 0;   // over the whole overlapping steps
  std::string step_names;
};

int64_t uncovered(const std::vector<Interval>& covered, int64_t begin, int64_t end) {
  int64_t c = 0;
  for (const auto& [b, e] : covered) c += overlap(b, e, begin, end);
  return std::max<int64_t>(0, end - begin - c);
}

UntracedHost untraced_host_time(const Trace& t, const EventTree& tree, int64_t begin, int64_t end) {
  UntracedHost u;
  for (const Step& s : tree.steps()) {
    if (s.end <= begin || s.ts >= end || s.event == kNoEvent) continue;
    const int64_t pid = t.track_of(s.event).pid;
    std::vector<Interval> covered;
    for (EventId e : cpu_in_window(t, tree, s.ts, s.end, nullptr)) {
      const Category c = t.category[e];
      if (c != Category::CpuOp && c != Category::CudaRuntime && c != Category::CudaDriver && c != Category::DataLoader) continue;
      if (t.track_of(e).pid != pid || profiler_step_number(t.name_of(e)) >= 0) continue;
      covered.push_back({std::max(t.ts[e], s.ts), std::min(t.end(e), s.end)});
    }
    covered = merge_intervals(std::move(covered));
    const int64_t b = std::max(begin, s.ts), e = std::min(end, s.end);
    u.window += uncovered(covered, b, e);
    u.window_step += e - b;
    u.steps += uncovered(covered, s.ts, s.end);
    u.steps_total += s.end - s.ts;
    u.step_names += fmt::format("{}ProfilerStep#{}", u.step_names.empty() ? "" : ", ", s.number);
  }
  return u;
}

}  // namespace

int64_t llm_trace_origin(const Trace& trace) {
  int64_t origin = INT64_MAX;
  for (size_t e = 0; e < trace.size(); ++e) origin = std::min(origin, trace.ts[e]);
  return origin == INT64_MAX ? 0 : origin;
}

std::string llm_window_context(const Trace& t, const EventTree& tree, int64_t begin, int64_t end, int64_t origin) {
  std::string out;
  const int64_t span = std::max<int64_t>(1, end - begin);
  out += fmt::format("Window: {} to {} after the trace start ({}).\n", offset_text(begin, origin),
                     offset_text(end, origin), duration_text(span));
  {
    std::string steps;
    size_t listed = 0;
    for (const Step& s : tree.steps()) {
      if (s.end <= begin || s.ts >= end) continue;
      if (listed++ < 8)
        steps += fmt::format("{}ProfilerStep#{} ({}{})", steps.empty() ? "" : ", ", s.number, duration_text(s.end - s.ts),
                             s.ts < begin || s.end > end ? ", partly in the window" : "");
    }
    if (listed > 8) steps += fmt::format(", and {} more", listed - 8);
    out += steps.empty() ? "Steps: none overlap this window.\n" : "Steps: " + steps + ".\n";
  }

  // ---- GPU ------------------------------------------------------------------------------
  const std::vector<EventId> gpu = gpu_in_window(t, tree, begin, end);
  std::map<int32_t, std::vector<Interval>> busy_by_device;
  std::map<std::string, std::pair<int64_t, int64_t>> copies;  // memcpy kind -> count, bytes
  int64_t copy_time = 0, kernel_count = 0, kernel_time = 0, memset_count = 0;
  std::map<OpCategory, int64_t> category_time;
  NameClassifier names(t);
  std::vector<int64_t> delays;
  int64_t short_kernels = 0;
  for (EventId e : gpu) {
    const int64_t clipped = overlap(t.ts[e], t.end(e), begin, end);
    busy_by_device[t.track_of(e).device].push_back({std::max(t.ts[e], begin), std::min(t.end(e), end)});
    category_time[names.gpu_category(tree, e)] += clipped;
    if (t.category[e] == Category::GpuMemcpy) {
      auto& c = copies[std::string(t.name_of(e))];
      ++c.first;
      if (const CopyArgs* a = t.copy(e); a && a->bytes > 0) c.second += a->bytes;
      copy_time += clipped;
    } else if (t.category[e] == Category::GpuMemset) {
      ++memset_count;
    } else {
      ++kernel_count;
      kernel_time += clipped;
    }
    const EventId launch = tree.launcher(e);
    if (launch != kNoEvent && t.ts[e] >= begin) {
      delays.push_back(t.ts[e] - t.ts[launch]);
      if (t.category[e] == Category::Kernel && t.dur[e] < t.dur[launch]) ++short_kernels;
    }
  }
  if (gpu.empty()) {
    out += tree.gpu_events().empty() ? "GPU: none in the whole trace (a CPU-only run).\n" : "GPU: no GPU activity in this window.\n";
  } else {
    for (auto& [device, intervals] : busy_by_device) {
      const auto merged = merge_intervals(std::move(intervals));
      const int64_t busy = total_length(merged);
      int64_t longest_gap = 0, gaps_over_100us = 0, cursor = begin;
      for (const auto& [b, e] : merged) {
        if (b - cursor > 100'000) ++gaps_over_100us;
        longest_gap = std::max(longest_gap, b - cursor);
        cursor = std::max(cursor, e);
      }
      longest_gap = std::max(longest_gap, end - cursor);
      out += fmt::format("GPU {}: busy {} ({:.1f}%), idle {} ({:.1f}%), longest idle gap {}, {} idle gaps over 100 us.\n",
                         device, duration_text(busy), 100.0 * busy / span, duration_text(span - busy),
                         100.0 * (span - busy) / span, duration_text(longest_gap), gaps_over_100us);
    }
    int64_t copy_count = 0;
    for (const auto& [kind, c] : copies) copy_count += c.first;
    out += fmt::format("GPU work: {} kernels ({}), {} memsets, {} memcpys ({}).\n", kernel_count,
                       duration_text(kernel_time), memset_count, copy_count, duration_text(copy_time));
    for (const auto& [kind, c] : copies)
      append_line(out, fmt::format("  {}: {} copies, {} bytes in all", clip(kind, 60), c.first, c.second), SIZE_MAX);
    std::vector<std::pair<int64_t, OpCategory>> by_time;
    for (const auto& [category, time] : category_time) by_time.emplace_back(time, category);
    std::sort(by_time.rbegin(), by_time.rend());
    std::string categories;
    for (const auto& [time, category] : by_time)
      categories += fmt::format("{}{} {}", categories.empty() ? "" : ", ", op_category_name(category), duration_text(time));
    out += "GPU time by category: " + categories + ".\n";
    if (!delays.empty()) {
      const Percentiles p = percentiles(delays);
      out += fmt::format("Launches: {} in the window, {} kernels shorter than their launch call; launch delay p50 {}, "
                         "p95 {}, max {}.\n",
                         delays.size(), short_kernels, duration_text(p.p50), duration_text(p.p95), duration_text(p.max));
    }
  }

  // ---- CPU ------------------------------------------------------------------------------
  std::vector<EventId> roots;
  const std::vector<EventId> cpu = cpu_in_window(t, tree, begin, end, &roots);
  std::unordered_map<StringId, std::pair<int64_t, int64_t>> op_counts;  // name -> count, time
  std::vector<EventId> listed_cpu;
  for (EventId e : cpu) {
    const Category c = t.category[e];
    if (c == Category::PythonFunction) continue;  // frames span everything; the paths show them
    // Steps are listed above (the 2021 schema writes them as ops, hence any category).
    if (profiler_step_number(t.name_of(e)) >= 0) continue;
    listed_cpu.push_back(e);
    if (c == Category::CpuOp || c == Category::CudaRuntime || c == Category::CudaDriver) {
      auto& oc = op_counts[t.name[e]];
      ++oc.first;
      oc.second += t.dur[e];
    }
  }
  const auto longest_first = [&](EventId a, EventId b) {
    const int64_t da = overlap(t.ts[a], t.end(a), begin, end), db = overlap(t.ts[b], t.end(b), begin, end);
    return da != db ? da > db : a < b;
  };
  const size_t cpu_shown = std::min(kTopCpu, listed_cpu.size());
  std::partial_sort(listed_cpu.begin(), listed_cpu.begin() + cpu_shown, listed_cpu.end(), longest_first);
  out += fmt::format("CPU: {} events in the window ({} not counting Python frames).\n", cpu.size(), listed_cpu.size());
  if (const UntracedHost u = untraced_host_time(t, tree, begin, end); u.window_step > 0)
    out += fmt::format("Host outside every op: {} ({:.1f}%) of the window's step time ran no op, runtime call or DataLoader "
                       "span on any thread of the process (untraced host code: Python, preprocessing, I/O, sleeps); "
                       "{} has {} ({:.1f}%) of such time in all.\n",
                       duration_text(u.window), 100.0 * u.window / u.window_step, u.step_names, duration_text(u.steps),
                       100.0 * u.steps / std::max<int64_t>(1, u.steps_total));
  if (cpu_shown) out += "Longest CPU events:\n";
  for (size_t i = 0; i < cpu_shown; ++i) append_line(out, event_line(t, tree, listed_cpu[i], begin, end, origin), SIZE_MAX);

  if (!op_counts.empty()) {
    std::vector<std::pair<StringId, std::pair<int64_t, int64_t>>> ops(op_counts.begin(), op_counts.end());
    std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
      return a.second.first != b.second.first ? a.second.first > b.second.first : a.first < b.first;
    });
    out += "Most frequent CPU ops and runtime calls:\n";
    for (size_t i = 0; i < std::min(kTopOpsByCount, ops.size()); ++i)
      append_line(out,
                  fmt::format("  {:>6}x  {}  ({} in all)", ops[i].second.first, clip(t.strings.view(ops[i].first), kNameChars),
                              duration_text(ops[i].second.second)),
                  SIZE_MAX);
  }

  std::vector<EventId> gpu_sorted = gpu;
  const size_t gpu_shown = std::min(kTopGpu, gpu_sorted.size());
  std::partial_sort(gpu_sorted.begin(), gpu_sorted.begin() + gpu_shown, gpu_sorted.end(), longest_first);
  if (gpu_shown) out += "Longest GPU events:\n";
  for (size_t i = 0; i < gpu_shown; ++i) append_line(out, event_line(t, tree, gpu_sorted[i], begin, end, origin), SIZE_MAX);

  // ---- Where they come from -------------------------------------------------------------
  std::vector<EventId> path_events;
  for (size_t i = 0; i < std::min<size_t>(3, gpu_shown); ++i) path_events.push_back(gpu_sorted[i]);
  for (size_t i = 0; i < cpu_shown && path_events.size() < kPaths; ++i) path_events.push_back(listed_cpu[i]);
  if (!path_events.empty()) out += "Call paths of the longest events (outermost first):\n";
  for (EventId e : path_events) append_line(out, "  " + call_path(t, tree, e), SIZE_MAX);

  // The thread that spent the most time in the window, as a tree.
  std::unordered_map<TrackId, int64_t> per_track;
  for (EventId r : roots) per_track[t.track[r]] += overlap(t.ts[r], t.end(r), begin, end);
  if (!per_track.empty()) {
    const TrackId busiest = std::max_element(per_track.begin(), per_track.end(), [](const auto& a, const auto& b) {
                              return a.second != b.second ? a.second < b.second : a.first > b.first;
                            })->first;
    out += fmt::format("Tree excerpt of the busiest thread (tid {}):\n", t.tracks[busiest].tid);
    size_t lines = 0;
    for (EventId r : roots)
      if (t.track[r] == busiest && lines < kTreeLines) tree_excerpt(t, tree, r, 0, begin, end, out, lines);
  }
  if (out.size() > kLlmContextChars) {
    constexpr std::string_view kCut = "\n[context cut to its size limit]\n";
    out = clip(out, kLlmContextChars - kCut.size() - 3) + std::string(kCut);
  }
  return out;
}

}  // namespace ttap
