// Host-side stalls on the device: synchronizing calls in the step loop (host_sync) and
// device allocations after warm-up (alloc_churn).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "rule_index.hpp"

namespace ttap::rules {

namespace {

// A synchronizing call shorter than this returned at once: the GPU had nothing queued.
constexpr int64_t kSyncMinDur = 20'000;
// GPU idle right after a sync below this is noise (one launch latency or two).
constexpr int64_t kMinIdleAfter = 20'000;
// A range shorter than kMinIdleAfter times this needs only this fraction of it idle after a
// stall-sized sync (see detect_host_sync).
constexpr int64_t kShareOfShortRange = 5;
// How far back a sync may lie and still explain idle in the range.
constexpr int64_t kSyncLookback = 10'000'000;
// Host-blocked time that is worth reporting even when the GPU did not idle afterwards.
constexpr int64_t kLongSync = 1'000'000;
// Confidence: idle caused by syncs as a share of the range; 0.5% fires, 10% is certain.
constexpr double kSyncFireShare = 0.005;
constexpr double kSyncStrongShare = 0.10;

// A cudaStreamSynchronize that only completes a host-to-device copy from pageable memory
// (tensor.to(device) without pinned memory) is pageable_memcpy's business.
bool completes_pageable_upload(const RuleIndex& ix, EventId sync) {
  const EventId parent = ix.tree.parent(sync);
  if (parent == kNoEvent) return false;
  for (EventId ch : ix.tree.children(parent)) {
    if (!ix.has(ch, kMemcpyCall)) continue;
    for (EventId g : ix.tree.children(ch)) {
      const std::string_view n = ix.t.name_of(g);
      if (ix.t.category[g] == Category::GpuMemcpy && n.find("HtoD") != std::string_view::npos &&
          n.find("Pageable") != std::string_view::npos)
        return true;
    }
  }
  return false;
}

// Host time in [b, e) that another pattern explains: the DataLoader (dataloader_stall's)
// and allocator calls after warm-up with torch.cuda.empty_cache (alloc_churn's). GPU idle
// while the host is in them is theirs, though a sync drained the queue before.
// A sync that waits for a large copy of an offload round trip to land (tensor.cpu() of an
// activation, then .cuda() of it) is offload_pingpong's business: the fix is not to move it.
bool completes_round_trip(const RuleIndex& ix, EventId sync) {
  const EventId parent = ix.tree.parent(sync);
  if (parent == kNoEvent) return false;
  for (EventId ch : ix.tree.children(parent)) {
    if (!ix.has(ch, kMemcpyCall) || ix.t.ts[ch] > ix.t.ts[sync]) continue;
    for (EventId g : ix.tree.children(ch))
      if (ix.t.category[g] == Category::GpuMemcpy && round_trip_partner(ix, g) != kNoEvent) return true;
  }
  return false;
}

std::vector<Interval> other_host_causes(const RuleIndex& ix, int64_t b, int64_t e) {
  std::vector<Interval> v;
  ix.dataloader.each_overlapping(ix.t, b, e, [&](EventId d) { v.emplace_back(ix.t.ts[d], ix.t.end(d)); });
  for (const SpanList* l : {&ix.allocs, &ix.empty_cache})
    l->each_overlapping(ix.t, b, e, [&](EventId a) {
      if (ix.after_warmup(a)) v.emplace_back(ix.t.ts[a], ix.t.end(a));
    });
  return merge_intervals(std::move(v));
}

// The outermost op of a device-value read around a sync: `.item()`, `is_nonzero` (an
// `if tensor.any():`), `.nonzero()` nest as aten::is_nonzero > aten::item >
// aten::_local_scalar_dense; kNoEvent when the sync reads no value.
EventId value_read_op(const RuleIndex& ix, EventId sync) {
  EventId read = kNoEvent;
  for (EventId p = ix.tree.parent(sync); p != kNoEvent; p = ix.tree.parent(p)) {
    if (ix.t.category[p] != Category::CpuOp) continue;
    if (!ix.has(p, kSyncOp)) break;
    read = p;
  }
  return read;
}

// When the GPU ran out of the work queued before the host entered `read` (an op that reads
// a device value): the latest end of what was launched before it, not before `read` begins.
// GPU idle after that while the host is still in the read (the op's dispatch, its copy
// call, the sync) is the read's: the host is busy fetching a value, launching nothing.
int64_t queue_end_before(const RuleIndex& ix, int64_t ts) {
  int64_t end = ts;
  const auto [lo, hi] = ix.launch_range(ts - kSyncLookback, ts);
  for (size_t i = lo; i < hi; ++i) {
    const EventId g = ix.gpu[ix.launch_gpu[i]];
    if (ix.on_primary(g)) end = std::max(end, ix.t.end(g));
  }
  return end;
}

struct SyncCase {
  EventId call;
  EventId op;      // enclosing cpu_op, or kNoEvent
  int64_t idle;    // GPU idle it caused in the range
  int64_t whole_idle;  // GPU idle it caused in all, also outside the range
  EventId read = kNoEvent;  // the outermost op of the value read around it (value_read_op)
};

std::string sync_fix(const RuleIndex& ix, const SyncCase& top, const std::vector<CodeLocation>& locs) {
  const std::string where = at_text(locs);
  // The op the user called (aten::item, not the _local_scalar_dense inside it), when a value is read.
  const std::string_view op = top.read != kNoEvent ? ix.t.name_of(top.read)
                              : top.op == kNoEvent ? std::string_view{}
                                                   : ix.t.name_of(top.op);
  const std::string_view call = ix.t.name_of(top.call);
  // `if tensor:` / `if t.any():` in Python: the host waits to branch on a device value.
  if (op == "aten::is_nonzero")
    return fmt::format("a Python condition on a device tensor (`if t:`, `if t.any():`; aten::is_nonzero{}) waits for "
                       "the GPU to evaluate it: check it on the device instead (a NaN guard: "
                       "torch._assert_async(~torch.isnan(t).any())), or only every N steps",
                       where);
  if (op == "aten::item" || op == "aten::_local_scalar_dense" || op == "aten::is_nonzero" || op == "aten::equal")
    return fmt::format("{}{} copies a device value to the host each time: keep the value on the device (accumulate "
                       "metrics in a tensor) and read it every N steps, or copy with .to('cpu', non_blocking=True) into "
                       "pinned memory and read it a step later",
                       op, where);
  if (op == "aten::nonzero" || op == "aten::masked_select" || op == "aten::unique" || op == "aten::_unique2")
    return fmt::format("{}{} has a data-dependent output shape, so the host must wait for the GPU: use fixed-shape "
                       "masks (torch.where, masked arithmetic) or pass a static size",
                       op, where);
  const bool device_wide = call == "cudaDeviceSynchronize" || call == "hipDeviceSynchronize";
  // A bare sync (no op reads a value) that a profiling or timing harness makes to time the
  // step (moca's run_torch_profiler): the job's loop holds no such call to remove, and a
  // production run, not profiled, does not wait in it.
  if (op.empty())
    if (const std::optional<CodeLocation> harness = harness_frame(ix, top.call))
      return fmt::format("{}{} is the profiling or timing harness's ({}), not the job's: it costs the recorded run, "
                         "not production; time the steps with CUDA events read after them, or synchronize outside "
                         "the recorded steps",
                         device_wide ? std::string_view("torch.cuda.synchronize()") : call, where,
                         harness->function.empty() ? harness->file : harness->function);
  if (device_wide)
    return fmt::format("remove torch.cuda.synchronize(){} from the step loop; time with CUDA events read at the end",
                       where);
  if (op == "aten::copy_" || op == "aten::to" || op == "aten::_to_copy")
    return fmt::format("the device-to-host copy in {}{} blocks: use non_blocking=True into a pinned buffer and "
                       "consume it later, or keep the data on the device",
                       op, where);
  return fmt::format("{}{}{} blocks the host until the GPU drains: keep values on the device, log every N steps, "
                     "use non_blocking copies and avoid data-dependent shapes",
                     call, op.empty() ? "" : fmt::format(" under {}", op), where);
}

}  // namespace

int64_t next_launch_after(const RuleIndex& ix, EventId sync) {
  const auto [next, none] = ix.launch_range(ix.t.end(sync), INT64_MAX);
  return next == none && ix.gpu_record_spans_steps() ? ix.step_last : ix.resume_after(ix.t.end(sync));
}

bool host_works_after(const RuleIndex& ix, EventId sync) {
  return next_launch_after(ix, sync) - ix.t.end(sync) > std::max(kSyncResumeSlack, ix.t.dur[sync]);
}

bool under_value_read(const RuleIndex& ix, EventId sync) {
  const EventId op = ix.enclosing_op(sync);
  return op != kNoEvent && (ix.has(op, kSyncOp) || (ix.tree.parent(op) != kNoEvent && ix.has(ix.tree.parent(op), kSyncOp)));
}

void detect_host_sync(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  std::vector<SyncCase> cases;
  int64_t blocked = 0, idle = 0;
  std::vector<Interval> idle_ivs;
  // A sync shortly before the range still explains idle inside it: the host resumes
  // launching only after it. So does one that opened an idle gap reaching into the range
  // (the wait of a long queue), as long as the host launched again soon after it returned.
  int64_t from = begin - kSyncLookback;
  for (auto gap : ix.whole_idle_gaps(begin, end, true)) from = std::min(from, gap.first - kSyncLookback);
  // A sync after the range is the range's when the host is already inside its read there.
  ix.syncs.each_overlapping(t, from, end + kSyncLookback, [&](EventId s) {
    const EventId read = value_read_op(ix, s);
    if (t.ts[s] >= end && (read == kNoEvent || t.ts[read] >= end)) return;
    // Under .item()/.nonzero() a sync is the pattern whatever its length: the host reads a
    // device value, and the queue it drained stays empty until the host launches again.
    const EventId op = ix.enclosing_op(s);
    const bool reads_value = under_value_read(ix, s);
    if (t.dur[s] < kSyncMinDur && !reads_value) return;
    if (completes_pageable_upload(ix, s) || completes_round_trip(ix, s)) return;
    // The GPU idles from when its queue drains at the end of the sync until the next launch the
    // host issues after it arrives; time the host spends in the DataLoader or the allocator
    // meanwhile is dataloader_stall's or alloc_churn's.
    // When the host launches nothing more, the GPU stays idle to the end of the profiled
    // steps (the last step's sync, then logging): the step waits all the same.
    const auto [next, none] = ix.launch_range(t.end(s), INT64_MAX);
    const bool to_steps_end = next == none && ix.gpu_record_spans_steps();
    // Until then, unless the host works long after the sync returns (host_works_after).
    const int64_t resume = host_works_after(ix, s) ? t.end(s) : next_launch_after(ix, s);
    if (resume <= begin) return;
    // The sync returns once the queue is empty; gaps while it waits are the queue's own,
    // until the queue runs dry: idle after that while the host still waits is the sync's.
    int64_t drained = ix.drained_during(s);
    if (read != kNoEvent) drained = std::min(drained, queue_end_before(ix, t.ts[read]));
    std::vector<Interval> gaps =
        uncovered(ix.busy, std::max(drained, ix.gpu_first), std::min(resume, to_steps_end ? ix.step_last : ix.gpu_last));
    const std::vector<Interval> dl = other_host_causes(ix, t.ts[s], resume);
    int64_t caused = 0, whole = 0;
    // Counted where it falls in the range: a sync at a range's end costs the next range too.
    for (auto [gb, ge] : gaps)
      for (auto iv : uncovered(dl, gb, ge)) {
        whole += iv.second - iv.first;
        if (iv.second <= begin || iv.first >= end) continue;
        iv = {std::max(iv.first, begin), std::min(iv.second, end)};
        caused += iv.second - iv.first;
        idle_ivs.push_back(iv);
      }
    // A sync the range lies in is the range's, with its whole length, also when the GPU
    // works off its queue meanwhile and idles only after the range: the host launches
    // nothing while it waits. One that ended before the range is the range's only through
    // idle in it.
    if (caused == 0 && t.end(s) <= begin) return;
    blocked += t.dur[s];
    idle += caused;
    cases.push_back({s, reads_value && !ix.has(op, kSyncOp) ? ix.tree.parent(op) : op, caused, whole, read});
  });
  // Several syncs may be followed by the same idle: count it once.
  idle_ivs = merge_intervals(std::move(idle_ivs));
  idle = 0;
  for (auto [b, e] : idle_ivs) idle += e - b;
  // The stall is judged whole, the range by its part of it: a range shorter than the stall
  // (a 1.7 us window of a 25 us wait after .nonzero()) holds less than kMinIdleAfter of it
  // and is still the sync's, when that part is a good share of the range.
  int64_t whole_idle = 0;
  for (const SyncCase& c : cases) whole_idle = std::max(whole_idle, c.whole_idle);
  const bool stalls = whole_idle >= kMinIdleAfter && idle >= std::min(kMinIdleAfter, (end - begin) / kShareOfShortRange);
  if (cases.empty() || (!stalls && blocked < kLongSync)) return;

  std::stable_sort(cases.begin(), cases.end(), [&](const SyncCase& a, const SyncCase& b) {
    return a.idle != b.idle ? a.idle > b.idle : t.dur[a.call] > t.dur[b.call];
  });
  RuleFinding f;
  f.id = "host_sync";
  const double range = static_cast<double>(end - begin);
  f.confidence = confidence_between(static_cast<double>(idle) / range, kSyncFireShare, kSyncStrongShare);
  // The host waited but the GPU never ran dry: a real stall only if work was waiting to be
  // launched, which the trace cannot show.
  if (!stalls) f.confidence = std::min(f.confidence, 0.5);
  f.cost = idle;
  f.spans = idle_ivs;
  f.begin = t.ts[cases.front().call];
  f.end = f.begin;
  std::map<std::string, int> by_kind;
  for (const SyncCase& c : cases) {
    f.begin = std::min(f.begin, t.ts[c.call]);
    f.end = std::max(f.end, t.end(c.call));
    f.events.push_back(c.call);
    ++by_kind[std::string(t.name_of(c.call))];
  }
  std::string kinds;
  for (auto& [k, n] : by_kind) kinds += fmt::format("{}{} x{}", kinds.empty() ? "" : ", ", k, n);
  f.evidence.push_back(fmt::format("{} ({}) block{} the host {} in total; GPU idle {} once the queue ran dry ({} of the "
                                   "range)",
                                   count_text(cases.size(), "synchronizing call"), kinds, cases.size() == 1 ? "s" : "",
                                   dur_text(blocked), dur_text(idle),
                                   pct_text(static_cast<double>(idle) / range)));
  for (size_t i = 0; i < cases.size() && i < 3; ++i) {
    const SyncCase& c = cases[i];
    f.evidence.push_back(fmt::format("{} {}{}; GPU idle {} once its queue ran dry", t.name_of(c.call), dur_text(t.dur[c.call]),
                                     c.op == kNoEvent ? "" : fmt::format(" under {}", t.name_of(c.op)),
                                     dur_text(c.idle)));
  }
  // The longest sync that crosses the range's edge: the range lies inside the wait. Its idle
  // is the whole wait's, "in all": the call's line above gives its idle in the range, and the
  // same words for both read "GPU idle 0.0 us" and "GPU idle 293 us" for one call.
  const auto crossing = std::max_element(cases.begin(), cases.end(), [&](const SyncCase& a, const SyncCase& b) {
    const bool ca = t.ts[a.call] < begin || t.end(a.call) > end, cb = t.ts[b.call] < begin || t.end(b.call) > end;
    return ca != cb ? cb : t.dur[a.call] < t.dur[b.call];
  });
  if (const EventId c = crossing->call; overlap(t.ts[c], t.end(c), begin, end) > 0 && (t.ts[c] < begin || t.end(c) > end))
    f.evidence.push_back(fmt::format("{} of {} crosses the range's edge ({}{} to {}{} of the range start): the host is "
                                     "blocked in it, launching nothing{}; GPU idle {} in all once its queue ran dry, "
                                     "until the host launches again",
                                     t.name_of(c), dur_text(t.dur[c]), t.ts[c] < begin ? "-" : "+",
                                     dur_text(std::llabs(t.ts[c] - begin)), t.end(c) < begin ? "-" : "+",
                                     dur_text(std::llabs(t.end(c) - begin)),
                                     2 * covered(ix.busy, begin, end) >= end - begin
                                         ? ", while the GPU works off what was queued before"
                                         : "",
                                     dur_text(crossing->whole_idle)));
  // A sync that returned before the range owns idle in it only through the queue it left
  // empty: say how long ago it returned and when the host fills the queue again, so a range
  // 20 ms after a read does not read as if it held the wait.
  if (const EventId s = cases.front().call; t.end(s) <= begin && cases.front().idle > 0) {
    const auto [next, none] = ix.launch_range(t.end(s), INT64_MAX);
    const int64_t resume = next == none ? end : ix.launch_ts[next];
    f.evidence.push_back(fmt::format(
        "{} returned {} before the range, the GPU's queue empty; {}", t.name_of(s), dur_text(begin - t.end(s)),
        next == none ? std::string("the host launches nothing more")
        : resume >= end ? fmt::format("the host launches again {} after the range's end", dur_text(resume - end))
                        : fmt::format("the host launches again at {}{} of the range start", resume < begin ? "-" : "+",
                                      dur_text(std::llabs(resume - begin)))));
  }
  f.locations = user_locations(ix, f.events);
  // torch.cuda.graph's own torch.cuda.synchronize() before capture_begin (vLLM's capture of
  // its piecewise graphs: 9 hipDeviceSynchronize calls under graphs.py's __enter__) is not
  // the user's to remove from a loop.
  std::vector<EventId> calls;
  for (const SyncCase& c : cases) calls.push_back(c.call);
  // One-time, as its fix says: xDiT's 35.3 ms sync inside Inductor's recording of a CUDA
  // graph tree, whose idle after it lies outside the recording, read as a 12.1 ms what-if.
  f.one_time = ix.all_capture_work(calls);
  f.fix = f.one_time ? capture_setup_fix("these synchronizations", at_text(f.locations))
                     : sync_fix(ix, cases.front(), f.locations);
  out.explained_idle.insert(out.explained_idle.end(), idle_ivs.begin(), idle_ivs.end());
  out.findings.push_back(std::move(f));
}

namespace {
// Two allocator calls after warm-up are a pattern, one may be a late first use.
constexpr int kMinAllocCalls = 2;
// ... unless that one call is this long (cudaFree synchronizes the device).
constexpr int64_t kLongAllocCall = 100'000;
// Confidence: allocator time (whole calls, also the parts outside the range) as a share of
// the range; 0.2% fires, 5% is certain.
constexpr double kAllocFireShare = 0.002;
constexpr double kAllocStrongShare = 0.05;
// The next launch within this of an allocator call's end is the one the call held up (the
// op that needed the memory launching its kernel).
constexpr int64_t kAllocResumeSlack = 200'000;

// "aten::empty under aten::addmm": the op that allocates and the op that needed it.
std::string op_path(const RuleIndex& ix, EventId op) {
  if (op == kNoEvent) return "";  // the allocator itself: said as "outside any op"
  std::string s(ix.t.name_of(op));
  EventId p = ix.tree.parent(op);
  while (p != kNoEvent && ix.t.category[p] != Category::CpuOp) p = ix.tree.parent(p);
  if (p != kNoEvent) s += fmt::format(" under {}", ix.t.name_of(p));
  return s;
}
}  // namespace

void detect_alloc_churn(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  // Calls are judged whole: a cudaFree that began before the range and blocks the host
  // through it (while the GPU works off what was queued before) is the range's cause, as is
  // one shortly before whose GPU idle reaches into it.
  std::vector<EventId> calls;
  int64_t total = 0;
  std::map<std::string, size_t> by_name;  // as the trace records them: cudaMalloc, hipFree, ...
  std::map<std::string, int64_t> by_op;
  std::vector<Interval> blocked, idle_ivs;
  EventId crossing = kNoEvent;  // the longest call crossing an edge of the range
  ix.allocs.each_overlapping(t, begin - kSyncLookback, end, [&](EventId a) {
    if (!ix.after_warmup(a)) return;
    // The GPU idle the call causes: under it (cudaFree waits for the device, cudaMalloc
    // holds up the host's next launch), and on until the host launches again when that
    // comes right after it; a later launch waits on whatever the host did in between.
    const int64_t resume = ix.resume_after(t.end(a));
    const int64_t until = resume - t.end(a) <= kAllocResumeSlack ? resume : t.end(a);
    std::vector<Interval> caused =
        uncovered(ix.busy, std::max({t.ts[a], ix.gpu_first, begin}), std::min({until, ix.gpu_last, end}));
    if (t.end(a) <= begin && caused.empty()) return;
    calls.push_back(a);
    total += t.dur[a];
    ++by_name[std::string(t.name_of(a))];
    by_op[op_path(ix, ix.enclosing_op(a))] += t.dur[a];
    if (overlap(t.ts[a], t.end(a), begin, end) > 0) blocked.emplace_back(std::max(begin, t.ts[a]), std::min(end, t.end(a)));
    // Crossing: running at an edge. A call that ended before the range counts only by the
    // idle it caused there, which the idle line says.
    if (overlap(t.ts[a], t.end(a), begin, end) > 0 && (t.ts[a] < begin || t.end(a) > end) &&
        (crossing == kNoEvent || t.dur[a] > t.dur[crossing]))
      crossing = a;
    idle_ivs.insert(idle_ivs.end(), caused.begin(), caused.end());
  });
  std::vector<EventId> cache_calls;
  // An empty_cache that begins in the range, or that the host is in while the GPU idles there
  // (a range inside the hipFree calls it makes).
  ix.empty_cache.each_overlapping(t, begin, end, [&](EventId e) {
    if (!ix.after_warmup(e)) return;
    if (t.ts[e] >= begin ||
        !uncovered(ix.busy, std::max({begin, t.ts[e], ix.gpu_first}), std::min({end, t.end(e), ix.gpu_last})).empty())
      cache_calls.push_back(e);
  });
  if (cache_calls.empty() && (calls.empty() || (static_cast<int>(calls.size()) < kMinAllocCalls && total < kLongAllocCall)))
    return;

  RuleFinding f;
  f.id = "alloc_churn";
  const double range = static_cast<double>(end - begin);
  f.confidence = confidence_between(static_cast<double>(total) / range, kAllocFireShare, kAllocStrongShare);
  if (!cache_calls.empty()) f.confidence = std::max(f.confidence, 0.8);  // empty_cache in the loop is the pattern itself
  if (ix.tree.steps().empty()) f.confidence *= 0.8;  // warm-up guessed, not known from steps
  // What it costs the range: the host blocked in the calls and the GPU idle they cause,
  // counted once, inside the range.
  idle_ivs = merge_intervals(std::move(idle_ivs));
  std::vector<Interval> both = blocked;
  both.insert(both.end(), idle_ivs.begin(), idle_ivs.end());
  both = merge_intervals(std::move(both));
  for (auto [b, e] : both) f.cost += e - b;
  f.spans = both;
  int64_t idle = 0;
  for (auto [b, e] : idle_ivs) idle += e - b;
  f.events = calls;
  f.events.insert(f.events.begin(), cache_calls.begin(), cache_calls.end());
  if (crossing != kNoEvent) std::stable_partition(f.events.begin(), f.events.end(), [&](EventId e) { return e == crossing; });
  set_span(t, f);
  const std::string top_op = top_key(by_op);  // "" both for no op and for calls outside any op
  // The calls by the names the trace records (hipFree on ROCm), allocations first; "after
  // warm-up" says what after_warmup took as warm-up (nothing, in a trace of one step).
  std::string counted;
  for (const char* kind : {"Malloc", "Free"})
    for (const auto& [name, n] : by_name)
      if (name.find(kind) != std::string::npos)
        counted += fmt::format("{}{}", counted.empty() ? "" : " and ", count_text(n, name + " call"));
  const size_t steps = ix.tree.steps().size();
  if (!calls.empty())
    f.evidence.push_back(fmt::format("{} {}, {} on the host", counted,
                                     steps == 0   ? "after warm-up (past the first fifth of the trace)"
                                     : steps == 1 ? "in the trace's one recorded step"
                                                  : "after warm-up (past the first step)",
                                     dur_text(total)));
  if (crossing != kNoEvent)
    f.evidence.push_back(fmt::format("{} of {} crosses the range's edge ({} to {} of the range start): the host is "
                                     "blocked in it, launching nothing{}",
                                     t.name_of(crossing), dur_text(t.dur[crossing]),
                                     fmt::format("{}{}", t.ts[crossing] < begin ? "-" : "+", dur_text(std::llabs(t.ts[crossing] - begin))),
                                     fmt::format("{}{}", t.end(crossing) < begin ? "-" : "+", dur_text(std::llabs(t.end(crossing) - begin))),
                                     2 * covered(ix.busy, begin, end) >= end - begin
                                         ? ", while the GPU works off what was queued before"
                                         : ""));
  if (idle > 0)
    f.evidence.push_back(fmt::format("GPU idle {} in the range from these calls until the host launches again ({} of "
                                     "the range)",
                                     dur_text(idle), pct_text(static_cast<double>(idle) / range)));
  if (!by_op.empty() && !calls.empty()) {
    const int64_t top_ns = by_op.at(top_op);
    f.evidence.push_back(top_op.empty() ? fmt::format("most allocator time outside any op ({})", dur_text(top_ns))
                                        : fmt::format("most allocator time under {} ({})", top_op, dur_text(top_ns)));
  }
  if (!cache_calls.empty())
    f.evidence.push_back(fmt::format("torch.cuda.empty_cache runs in the range after warm-up ({})",
                                     count_text(cache_calls.size(), "call")));
  f.locations = user_locations(ix, f.events);
  const std::string where = f.locations.empty() ? "" : fmt::format(" ({}:{})", f.locations[0].file, f.locations[0].line);
  // Calls made while a CUDA graph is set up or captured (torch.cuda.graph empties the cache
  // before capture_begin) are one-time warm-up, which the engine marks as such: no loop to
  // take them out of, no allocator growing.
  f.one_time = ix.all_capture_work(f.events);
  f.fix = f.one_time ? capture_setup_fix("these allocator calls", where)
          : !cache_calls.empty()
              ? fmt::format("remove torch.cuda.empty_cache(){} from the loop: it returns cached blocks that the next "
                            "step must {} again",
                            where, ix.amd ? "hipMalloc" : "cudaMalloc")
              : fmt::format("the caching allocator keeps growing{}{}: keep shapes stable (pad to a few bucket "
                            "sizes) or set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
                            top_op.empty() ? "" : " under " + top_op, where);
  out.explained_idle.insert(out.explained_idle.end(), idle_ivs.begin(), idle_ivs.end());
  out.findings.push_back(std::move(f));
}

}  // namespace ttap::rules
