#include "ttap/whatif.hpp"

#include <algorithm>
#include <unordered_map>

#include "ttap/analyze.hpp"

namespace ttap {

namespace {

struct StepFrame {
  size_t steps = 1;
  int64_t mean_step = 0;
  int64_t begin = INT64_MIN, end = INT64_MAX;  // the steps' span (all of the trace without steps)
  int64_t span_begin = 0, span_end = 0;        // without steps: first to last GPU activity
  std::vector<Interval> busy;                  // all GPU activity, merged
  bool per_step = false;
  // The most a step could lose: its time minus the busy time of the GPU work it launched
  // that the fix leaves in place (mean over steps); without steps, the profiled span minus
  // that busy time.
  int64_t bound = 0;
};

// The GPU work a fix leaves on the critical path, the floor under a step: a fix on the host
// (DataLoader, syncs) leaves all of it; overlapping collectives with compute takes the
// exposed communication off it, and pinned asynchronous copies the exposed copies.
enum class Floor : uint8_t { all_work, without_communication, without_copies };

bool on_floor(const Trace& t, EventId g, Floor floor) {
  switch (floor) {
    case Floor::all_work: return true;
    case Floor::without_communication: return !(t.category[g] == Category::Kernel && is_communication_kernel(t.name_of(g)));
    case Floor::without_copies: return t.category[g] != Category::GpuMemcpy;
  }
  return true;
}

StepFrame frame(const Trace& t, const EventTree& tree, Floor floor = Floor::all_work) {
  StepFrame f;
  for (EventId g : tree.gpu_events()) f.busy.emplace_back(t.ts[g], t.end(g));
  f.busy = merge_intervals(std::move(f.busy));
  if (!tree.steps().empty()) {
    f.steps = tree.steps().size();
    f.per_step = true;
    std::vector<std::vector<Interval>> work(f.steps);
    for (EventId g : tree.gpu_events())
      if (const int32_t s = tree.step_of(g); s >= 0 && static_cast<size_t>(s) < f.steps && on_floor(t, g, floor))
        work[s].emplace_back(t.ts[g], t.end(g));
    int64_t total = 0, slack = 0;
    for (size_t i = 0; i < f.steps; ++i) {
      const Step& s = tree.steps()[i];
      total += s.end - s.ts;
      slack += std::max<int64_t>(0, (s.end - s.ts) - total_length(merge_intervals(std::move(work[i]))));
    }
    f.mean_step = total / static_cast<int64_t>(f.steps);
    f.bound = slack / static_cast<int64_t>(f.steps);
    f.begin = tree.steps().front().ts;
    f.end = tree.steps().back().end;
  } else if (!f.busy.empty()) {
    f.span_begin = f.busy.front().first;
    f.span_end = f.busy.back().second;
    f.mean_step = f.span_end - f.span_begin;
    std::vector<Interval> work;
    for (EventId g : tree.gpu_events())
      if (on_floor(t, g, floor)) work.emplace_back(t.ts[g], t.end(g));
    f.bound = f.mean_step - total_length(merge_intervals(std::move(work)));
  }
  return f;
}

// Length of [lo, hi) during which the GPU was idle.
int64_t idle_within(const std::vector<Interval>& busy, int64_t lo, int64_t hi) {
  return hi > lo ? (hi - lo) - clipped_length(busy, lo, hi) : 0;
}

// Without steps, GPU idle inside [lo, hi) counts only within the profiled span: before the
// first GPU work and after the last the GPU is not waiting, it is not in use.
int64_t idle_in_span(const StepFrame& f, int64_t lo, int64_t hi) {
  return idle_within(f.busy, std::max(lo, f.span_begin), std::min(hi, f.span_end));
}

WhatIf finish(WhatIf w, int64_t saved_total, const StepFrame& f) {
  w.per_step = f.per_step;
  w.bound = std::max<int64_t>(0, f.bound);
  w.saved_per_step = std::min(saved_total / static_cast<int64_t>(f.steps), w.bound);
  w.frame = f.mean_step;
  w.step_share = f.mean_step > 0 ? static_cast<double>(w.saved_per_step) / static_cast<double>(f.mean_step) : 0.0;
  return w;
}

bool in_frame(const StepFrame& f, int64_t ts) { return ts >= f.begin && ts < f.end; }

bool is_sync_call(std::string_view n) { return n.find("Synchronize") != std::string_view::npos; }

// Replays the trace's steps with CPU spans removed (and, optionally, syncs that no longer
// wait): every CPU timestamp moves earlier by the removed time before it; each GPU event
// starts once its (moved) launch has happened plus the idle-queue launch latency, and
// once the previous work on its stream is done; a sync call lasts until the GPU work
// launched before it has finished; and no step takes less than the GPU work it launched.
// Returns the mean step time, in ns. Estimates compare
// two replays (as is and edited), so what the model gets wrong cancels out.
int64_t simulate(const Trace& t, const EventTree& tree, const std::vector<Interval>& removed, bool syncs_wait) {
  enum Kind { kStepStart, kRemoval, kCall, kStepEnd };
  struct Item {
    int64_t ts;
    Kind kind;
    EventId event;  // the call, or the step's index
    int64_t end;    // removal end; for a call, where its work starts in `launched`
  };
  std::vector<Item> items;
  for (size_t i = 0; i < tree.steps().size(); ++i) {
    items.push_back({tree.steps()[i].ts, kStepStart, static_cast<EventId>(i), 0});
    items.push_back({tree.steps()[i].end, kStepEnd, static_cast<EventId>(i), 0});
  }
  for (const auto& [a, b] : removed) items.push_back({a, kRemoval, kNoEvent, b});
  // Each launch's GPU work: (launch, GPU event) pairs sorted by launch, stably, so one
  // launch's work is one run of them in the order of tree.gpu_events(); a call's item keeps
  // where its run starts. (A vector per event of the trace cost 24 bytes times every event,
  // faulted in afresh by each replay: 110 of a first replay's 170 ms on 1 GB.)
  std::vector<std::pair<EventId, EventId>> launched;
  std::vector<int64_t> delays;
  for (EventId g : tree.gpu_events()) {
    const EventId l = tree.launcher(g);
    if (l == kNoEvent) continue;
    launched.emplace_back(l, g);
    delays.push_back(std::max<int64_t>(0, t.ts[g] - t.ts[l]));
  }
  std::stable_sort(launched.begin(), launched.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t e = 0, run = 0; e < t.size(); ++e) {
    while (run < launched.size() && launched[run].first < e) ++run;
    const bool has_work = run < launched.size() && launched[run].first == e;
    if (is_launch(t.category[e]) && (has_work || is_sync_call(t.name_of(static_cast<EventId>(e)))))
      items.push_back({t.ts[e], kCall, static_cast<EventId>(e), static_cast<int64_t>(run)});
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.ts != b.ts ? a.ts < b.ts : a.kind < b.kind; });
  // The launch latency of an idle queue. (Uncapped, it was hta_torchrec_a100_rank0's queue
  // depth, 11.5 ms, and each of the ~14 stream syncs a step waited that long for work
  // launched just before it: the steps replayed as recorded took 366-378 ms against the
  // 210-216 ms recorded, and host_sync "saved" 127 ms a step.)
  const int64_t min_delay = idle_queue_launch_latency(delays);
  int64_t removed_before = 0, sync_adjust = 0, drain = INT64_MIN;
  int64_t removal_start = 0, removal_end = INT64_MIN;  // the removal span being passed
  std::unordered_map<int64_t, int64_t> stream_end;
  // The removal being passed takes out its part before x: all of it once x is past its end.
  // (Counting it only from the next removal on moved everything after a step's DataLoader
  // fetch by the previous step's fetch: gpuzoo_0048's 14.9 ms fetch, GPU idle throughout,
  // "saved ~50.4 us per step", its first step's 101 us fetch halved.)
  auto map = [&](int64_t x) {
    const int64_t passed = removal_end == INT64_MIN ? 0 : std::clamp(x, removal_start, removal_end) - removal_start;
    return x - removed_before - passed + sync_adjust;
  };
  std::vector<int64_t> new_start(tree.steps().size()), new_end(tree.steps().size());
  for (const Item& it : items) {
    switch (it.kind) {
      case kStepStart: new_start[it.event] = map(it.ts); break;
      case kStepEnd: new_end[it.event] = map(it.ts); break;
      case kRemoval:
        if (it.ts >= removal_end) {
          removed_before += std::max<int64_t>(0, removal_end - removal_start);
          removal_start = it.ts;
          removal_end = it.end;
        }
        break;
      case kCall: {
        const EventId c = it.event;
        const int64_t at = map(t.ts[c]);
        for (size_t j = static_cast<size_t>(it.end); j < launched.size() && launched[j].first == c; ++j) {
          const EventId g = launched[j].second;
          int64_t& free = stream_end[t.tracks[t.track[g]].stream * 64 + t.tracks[t.track[g]].device];
          const int64_t start = std::max(free == 0 ? INT64_MIN : free, at + min_delay);
          free = start + t.dur[g];
          drain = std::max(drain, free);
        }
        if (is_sync_call(t.name_of(c))) {
          const int64_t cost = std::min<int64_t>(t.dur[c], 10'000);  // the call itself, without waiting
          const int64_t end = syncs_wait ? std::max(at + cost, drain) : at + cost;
          sync_adjust += (end - at) - t.dur[c];
        }
        break;
      }
    }
  }
  // A step cannot take less time than the GPU work it launched (its busy time).
  std::vector<std::vector<Interval>> work(new_start.size());
  for (EventId g : tree.gpu_events()) {
    const int32_t s = tree.step_of(g);
    if (s >= 0) work[s].emplace_back(t.ts[g], t.end(g));
  }
  int64_t total = 0;
  for (size_t i = 0; i < new_start.size(); ++i)
    total += std::max(new_end[i] - new_start[i], total_length(merge_intervals(std::move(work[i]))));
  return new_start.empty() ? 0 : total / static_cast<int64_t>(new_start.size());
}

// What the DataLoader and host-sync estimates share: the frame and, with steps, the steps
// replayed as they are (whatif_all computes them once for both).
struct AsIs {
  StepFrame f;
  int64_t replayed = 0;
};

AsIs as_is(const Trace& t, const EventTree& tree) {
  AsIs a{frame(t, tree)};
  if (!tree.steps().empty()) a.replayed = simulate(t, tree, {}, true);
  return a;
}

WhatIf dataloader_from(const Trace& t, const EventTree& tree, const AsIs& base) {
  const StepFrame& f = base.f;
  NameClassifier names(t);
  std::vector<Interval> loader;
  for (EventId e = 0; e < t.size(); ++e) {
    if (!tree.in_tree(e) || !names.dataloader(t.name[e]) || !in_frame(f, t.ts[e])) continue;
    loader.emplace_back(t.ts[e], t.end(e));
  }
  loader = merge_intervals(std::move(loader));
  if (!tree.steps().empty()) {
    const int64_t saved = base.replayed - simulate(t, tree, loader, true);
    return finish({"dataloader_stall", "prefetch batches in DataLoader workers (num_workers > 0, pin_memory)", 0, 0,
                   "the steps replayed with and without the DataLoader __next__ spans on the CPU: launches move earlier, "
                   "GPU work follows its launches and streams, syncs wait for the GPU"},
                  saved * static_cast<int64_t>(f.steps), f);
  }
  int64_t exposed = 0;
  for (const auto& [lo, hi] : loader) exposed += idle_in_span(f, lo, hi);
  return finish({"dataloader_stall", "prefetch batches in DataLoader workers (num_workers > 0, pin_memory)", 0, 0,
                 "GPU idle time inside the DataLoader __next__ spans (no steps to replay)"},
                exposed, f);
}

WhatIf host_sync_from(const Trace& t, const EventTree& tree, const AsIs& base) {
  const StepFrame& f = base.f;
  if (!tree.steps().empty()) {
    const int64_t saved = base.replayed - simulate(t, tree, {}, false);
    return finish({"host_sync", "keep values on the device; sync or log every N steps", 0, 0,
                   "the steps replayed with synchronizing calls that wait for the GPU and with calls that return at once"},
                  saved * static_cast<int64_t>(f.steps), f);
  }
  // Each call's stretch, from its start to the first GPU work after it returns, merged:
  // calls back to back wait for the same idle GPU, which is lost once, not once per call.
  // A stretch saves at most the time its calls held the host: without them the host runs
  // ahead by that much and no more, so idle after a call returns that is longer than the
  // call (the host busy with other work) is not the call's to save.
  struct Wait {
    int64_t begin, end, blocked;
  };
  std::vector<Wait> waits;
  for (EventId e = 0; e < t.size(); ++e) {
    if (!is_launch(t.category[e]) || !is_sync_call(t.name_of(e))) continue;
    auto next = std::lower_bound(f.busy.begin(), f.busy.end(), Interval{t.end(e), t.end(e)},
                                 [](const Interval& a, const Interval& b) { return a.second < b.second; });
    const int64_t resume = next == f.busy.end() ? t.end(e) : std::max(t.end(e), next->first);
    waits.push_back({t.ts[e], resume, t.dur[e]});
  }
  std::sort(waits.begin(), waits.end(), [](const Wait& a, const Wait& b) { return a.begin < b.begin; });
  int64_t idle = 0;
  for (size_t i = 0; i < waits.size();) {
    Wait merged = waits[i];
    for (++i; i < waits.size() && waits[i].begin <= merged.end; ++i) {
      merged.end = std::max(merged.end, waits[i].end);
      merged.blocked += waits[i].blocked;
    }
    idle += std::min(idle_in_span(f, merged.begin, merged.end), merged.blocked);
  }
  return finish({"host_sync", "keep values on the device; sync or log every N steps", 0, 0,
                 "GPU idle time from each synchronizing call's start to the next GPU work after it, at most the time the calls held the host (no steps to replay)"},
                idle, f);
}

}  // namespace

WhatIf whatif_dataloader(const Trace& t, const EventTree& tree) { return dataloader_from(t, tree, as_is(t, tree)); }

WhatIf whatif_host_sync(const Trace& t, const EventTree& tree) { return host_sync_from(t, tree, as_is(t, tree)); }

WhatIf whatif_pageable_memcpy(const Trace& t, const EventTree& tree, const std::vector<EventId>& not_made) {
  const StepFrame f = frame(t, tree, Floor::without_copies);
  double pinned_bw = 0;  // bytes per ns = GB/s
  for (EventId g : tree.gpu_events()) {
    const CopyArgs* c = t.copy(g);
    if (t.category[g] == Category::GpuMemcpy && c && c->bytes > (1 << 20) && t.dur[g] > 0 &&
        t.name_of(g).find("Pinned") != std::string_view::npos)
      pinned_bw = std::max(pinned_bw, static_cast<double>(c->bytes) / static_cast<double>(t.dur[g]));
  }
  if (pinned_bw <= 0) pinned_bw = 20.0;
  std::vector<Interval> compute;
  for (EventId g : tree.gpu_events())
    if (t.category[g] == Category::Kernel) compute.emplace_back(t.ts[g], t.end(g));
  compute = merge_intervals(std::move(compute));
  double saved = 0;
  for (EventId g : tree.gpu_events()) {
    const CopyArgs* c = t.copy(g);
    if (t.category[g] != Category::GpuMemcpy || !c || c->bytes <= 0 || t.dur[g] <= 0 || !in_frame(f, t.ts[g]) ||
        t.name_of(g).find("Pageable") == std::string_view::npos ||
        std::find(not_made.begin(), not_made.end(), g) != not_made.end())
      continue;
    const double pinned_time = static_cast<double>(c->bytes) / pinned_bw;
    const double exposed = static_cast<double>(t.dur[g] - clipped_length(compute, t.ts[g], t.end(g)));
    saved += exposed * std::max(0.0, 1.0 - pinned_time / static_cast<double>(t.dur[g]));
  }
  return finish({"pageable_memcpy", "pin host memory and copy with non_blocking=True", 0, 0,
                 "exposed pageable copy time beyond what the bytes take at the trace's best pinned bandwidth"},
                static_cast<int64_t>(saved), f);
}

WhatIf whatif_exposed_comm(const Trace& t, const EventTree& tree) {
  const StepFrame f = frame(t, tree, Floor::without_communication);
  int64_t exposed = 0;
  for (const auto& g : gpu_timeline(t, tree)) exposed += g.exposed_communication;
  return finish({"comm_not_overlapped", "overlap collectives with compute (DDP buckets, FSDP prefetch)", 0, 0,
                 "exposed communication time in the GPU timeline (an upper bound)"},
                exposed, f);
}

std::vector<WhatIf> whatif_all(const Trace& t, const EventTree& tree) {
  const AsIs base = as_is(t, tree);
  std::vector<WhatIf> all = {dataloader_from(t, tree, base), host_sync_from(t, tree, base), whatif_pageable_memcpy(t, tree),
                             whatif_exposed_comm(t, tree)};
  std::erase_if(all, [](const WhatIf& w) { return w.saved_per_step <= 0; });
  std::sort(all.begin(), all.end(), [](const WhatIf& a, const WhatIf& b) { return a.saved_per_step > b.saved_per_step; });
  return all;
}

}  // namespace ttap
