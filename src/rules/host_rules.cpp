// The GPU waiting on the host: dataloader_stall, cpu_bound_step, launch_bound, and
// gpu_idle for the idle time no specific id explains.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "rule_index.hpp"

namespace ttap::rules {

namespace {

// An idle gap at least kLongGap long (rule_index.hpp) is a stall the host caused; shorter
// gaps are launch_bound's.
// dataloader_stall: GPU idle inside DataLoader __next__ as a share of the range; 5% fires,
// 50% is certain; below kMinStall in absolute terms it does not fire at all.
constexpr double kStallFireShare = 0.05;
constexpr double kStallStrongShare = 0.50;
constexpr int64_t kMinStall = 500'000;
// With steps, the stall of the loader spans seen, over the median step, must reach this too:
// a window may sit inside a 1 ms fetch that costs 1% of each step (workers keeping up; not
// for a single-process loader, which has none).
constexpr double kStallStepShare = 0.05;
// cpu_bound_step: idle time in long gaps that the main thread spends in CPU work; the work
// must cover at least half of a gap to be its cause. 5% of the range fires, 50% is certain.
constexpr double kCpuCoverShare = 0.5;
constexpr double kCpuFireShare = 0.05;
constexpr double kCpuStrongShare = 0.50;
// ... a Python function's own code counts from this much of it in a gap (own_code_time).
constexpr int64_t kMinOwnCode = 50'000;
// launch_bound: at least this many kernels in the range (windows of short inference traces
// are tens of microseconds long); GPU idle in short gaps that end as
// soon as the next launch arrives, as a share of the range: 15% fires, 50% is certain.
constexpr size_t kMinKernels = 8;
// ... counted over at least this much time around the range (see detect_launch_bound).
constexpr int64_t kLaunchContext = 1'000'000;
// ... and then most of those kernels must be shorter than their launch call.
constexpr double kWidenedShortShare = 0.6;
// ... of which at least this share run shorter than their launch call (the catalog's "many
// kernels shorter than their launch"); longer kernels leave the launch call itself hidden.
constexpr double kMinShortShare = 0.30;
constexpr double kStarvedFireShare = 0.15;
constexpr double kStarvedStrongShare = 0.50;
// When kernels outlast their launch calls, the GPU can still wait on the host's per-op work
// between launches (Python, the dispatcher: eager inference at batch 1). Starved idle must
// then reach this share, twice the firing share, so a few slow ops do not make a finding.
constexpr double kOverheadFireShare = 0.30;
// gpu_idle: a gap whose ending kernel sat launched this long with the device idle was held
// by something outside the trace (half a stall-sized gap; an idle queue starts a kernel
// within tens of microseconds of its launch).
constexpr int64_t kQueuedUnrunGap = kLongGap / 2;
// gpu_idle: unexplained idle in long gaps; 10% of the range fires, 60% is as sure as a
// catch-all gets (its confidence tops out at kIdleMaxConfidence).
constexpr double kIdleFireShare = 0.10;
constexpr double kIdleStrongShare = 0.60;
constexpr double kIdleMaxConfidence = 0.7;

// A Python frame is looked into rather than counted: with with_stack every Python call has
// its frame, so real work shows as ops or as calls into C ("<built-in method ...>", numpy
// and friends) under it; a built-in that is a torch binding does its work in the aten ops
// under it. A frame with nothing identified under it for the length of a gap (a wait,
// unprofiled code) leaves that idle to gpu_idle.
// So is a built-in that calls back into Python (next() on a DataLoader iterator runs its
// __next__, whose wait for the workers is dataloader_stall's, not CPU work).
bool is_module_marker(const RuleIndex& ix, EventId e) {
  if (ix.t.category[e] != Category::PythonFunction) return false;
  if (ix.t.name_of(e).substr(0, 10) != "<built-in ") return true;
  for (EventId ch : ix.tree.children(e))
    if (ix.t.category[ch] == Category::CpuOp || ix.t.category[ch] == Category::PythonFunction) return true;
  return false;
}

// The time in [b, e) that a Python function (not a built-in) which launches nothing in all
// its length spends in its own code: its overlap less its children's. Its bytecode and what
// runs in C without a call the profiler records (numpy's array operators and indexing, the
// body of np.histogram between its recorded calls) show only there: work, as a built-in
// call under it is. A frame that launches kernels elsewhere (a layer, the step) is not
// counted so: time it holds with nothing under it while the GPU idles is not known to be its
// own work (the host left the profiler's view), and stays gpu_idle's.
// Less than kMinOwnCode of it in the range is the interpreter's overhead between the frame's
// calls (a few microseconds each), not work to move.
// Inside CUDA graph capture "launches nothing" says nothing (captured kernels are recorded,
// not run, so no launch shows a kernel): a frame there is capture work, left as it was.
int64_t own_code_time(const RuleIndex& ix, EventId f, int64_t b, int64_t e) {
  const Trace& t = ix.t;
  if (t.category[f] != Category::PythonFunction || t.name_of(f).starts_with("<built-in ")) return 0;
  if (ix.in_graph_capture(f)) return 0;
  int64_t own = overlap(t.ts[f], t.end(f), b, e);
  for (EventId ch : ix.tree.children(f)) own -= overlap(t.ts[ch], t.end(ch), b, e);
  return own >= kMinOwnCode ? own : 0;
}

// Host work in [b, e) that launches no GPU work: the outermost events under `ev` that
// launch nothing while they run, each handed to `found` with its overlap with [b, e).
// Events that do launch are looked into, since a layer may hold a numpy call between its
// kernels; a Python function that launches nothing is looked into for its calls and counted
// for its own code's time (own_code_time).
template <typename F>
void quiet_work(const RuleIndex& ix, EventId ev, int64_t b, int64_t e, F& found, bool any_thread = false) {
  for (EventId ch : ix.tree.children(ev)) {
    // A wait on a collective is communication's time (the other ranks), not CPU work; nor is
    // loss.backward()'s wait for the autograd engine (its work is judged on the engine's thread).
    if (is_gpu_activity(ix.t.category[ch]) || is_launch(ix.t.category[ch]) || ix.has(ch, kDataLoader | kCommWait | kBackwardCall))
      continue;
    const int64_t o = overlap(ix.t.ts[ch], ix.t.end(ch), b, e);
    if (o == 0) continue;
    const bool launches = launches_from(ix, ch, any_thread);
    if (launches || is_module_marker(ix, ch)) {
      quiet_work(ix, ch, b, e, found, any_thread);
      if (!launches)
        if (const int64_t own = own_code_time(ix, ch, b, e); own > 0) found(ch, own);
      continue;
    }
    found(ch, o);
  }
}

// Ops that only set up a tensor (allocate it uninitialized, or make a view or an alias of
// another): no data is computed, so a long call is the host running slowly, not work that
// could run elsewhere.
bool tensor_setup_op(std::string_view n) {
  for (std::string_view op : {"aten::empty", "aten::empty_like", "aten::empty_strided", "aten::detach", "aten::to",
                              "aten::t", "aten::expand", "aten::slice", "aten::view", "aten::as_strided", "aten::narrow",
                              "aten::reshape", "aten::_reshape_alias", "aten::permute", "aten::transpose",
                              "aten::unsqueeze", "aten::squeeze", "aten::alias", "aten::select", "aten::lift_fresh"})
    if (n == op) return true;
  return false;
}

// Whether e runs inside DistributedDataParallel's forward (its record_function span).
bool under_ddp_forward(const RuleIndex& ix, EventId e) {
  for (EventId p = ix.tree.parent(e); p != kNoEvent; p = ix.tree.parent(p))
    if (ix.t.name_of(p) == "DistributedDataParallel.forward") return true;
  return false;
}

// The host work behind idle time, by name: the time each name's calls hold of the idle,
// how many calls, and the longest. Blame goes to what holds the time: 81 calls of 30 us are
// not "inside" one op the way a single 3 ms call is.
struct Culprit {
  int64_t ns = 0;
  std::vector<EventId> calls;
  int64_t longest = 0;
};

std::string culprit_text(const Trace& t, const std::string& name, const Culprit& c) {
  if (c.calls.size() == 1) return fmt::format("{} of that idle inside {} (one {} call)", dur_text(c.ns), name, dur_text(t.dur[c.calls[0]]));
  return fmt::format("{} of that idle in {} {} calls (longest {})", dur_text(c.ns), c.calls.size(), name,
                     dur_text(c.longest));
}

std::string step_share_text(const RuleIndex& ix, int64_t ns) {
  if (ix.median_step <= 0) return "";
  return fmt::format(", {} of a {} step", pct_text(static_cast<double>(ns) / static_cast<double>(ix.median_step)),
                     dur_text(ix.median_step));
}

// Whether the synchronizing call `s` brings device values to the host: under .item(),
// .nonzero() and the like, or completing a device-to-host copy (its own, or one issued just
// before it under the same parent, as tensor.cpu() does). An event or stream sync alone
// (timing, DDP's bucket waits) reads nothing the host could then work on.
bool reads_device_values(const RuleIndex& ix, EventId s) {
  const Trace& t = ix.t;
  if (under_value_read(ix, s)) return true;
  const auto downloads = [&](EventId call) {
    if (!ix.has(call, kMemcpyCall)) return false;
    for (EventId g : ix.tree.children(call))
      if (t.category[g] == Category::GpuMemcpy && t.name_of(g).find("DtoH") != std::string_view::npos) return true;
    return false;
  };
  if (downloads(s)) return true;
  const EventId parent = ix.tree.parent(s);
  if (parent == kNoEvent) return false;
  for (EventId ch : ix.tree.children(parent))
    if (t.ts[ch] <= t.ts[s] && downloads(ch)) return true;
  return false;
}

// The synchronizing call that opened a GPU idle gap by a read of device values, when the host
// then went on working without launching (host_works_after): it returned inside the gap on
// the launching thread or the loop's thread. The host is working on what it read (numpy
// statistics over .cpu()'d outputs, Python over .item() values); kNoEvent when none.
EventId read_before_host_work(const RuleIndex& ix, Interval gap) {
  const Trace& t = ix.t;
  EventId found = kNoEvent;
  ix.syncs.each_overlapping(t, gap.first, gap.second, [&](EventId s) {
    if (found != kNoEvent || t.end(s) < gap.first || t.end(s) >= gap.second) return;
    if (t.track[s] != ix.main_thread && t.track[s] != ix.step_thread) return;
    if (host_works_after(ix, s) && reads_device_values(ix, s)) found = s;
  });
  return found;
}

// Within an idle gap [b, e) that CPU work holds only part of, the stretch the host spends in
// that work: the quiet events' spans, joined across the interpreter's few microseconds
// between calls (under kMinOwnCode), the one holding the most work (as cpu_bound_step counts
// it: a Python function's own code, not its whole span), when that work is itself
// at least a long gap's worth and covers at least half the stretch (the whole-gap test, on the
// stretch). Less is a slow op or two in a gap that something else holds; the gap's other
// stretches are other work (the profiler's step, the next step's setup).
std::vector<Interval> work_stretch(const RuleIndex& ix, const std::vector<std::pair<EventId, int64_t>>& quiet,
                                   int64_t b, int64_t e) {
  const Trace& t = ix.t;
  // Each event's span in the gap with the work it holds there (a Python function's own code is
  // less than its span), in time order. Work inside an op that launches (hta_ddp_a100_nccl's
  // _foreach_mul_, 4 ms of per-tensor checks before its one launch) is that op being slow to
  // launch, which gpu_idle reports with what the host did; only work outside any such op is.
  const auto inside_launching_op = [&](EventId ev) {
    for (EventId p = ix.tree.parent(ev); p != kNoEvent; p = ix.tree.parent(p))
      if (t.category[p] == Category::CpuOp && launches_from(ix, p, true)) return true;
    return false;
  };
  std::vector<std::pair<Interval, int64_t>> spans;
  for (auto [ev, o] : quiet)
    if (!inside_launching_op(ev)) spans.push_back({{std::max(b, t.ts[ev]), std::min(e, t.end(ev))}, o});
  std::sort(spans.begin(), spans.end());
  Interval best{0, 0}, cur{0, 0};
  int64_t best_work = 0, cur_work = 0;
  for (auto [span, o] : spans) {
    if (cur_work > 0 && span.first - cur.second < kMinOwnCode) {
      cur.second = std::max(cur.second, span.second);
      cur_work += o;
    } else {
      cur = span;
      cur_work = o;
    }
    if (cur_work > best_work) best = cur, best_work = cur_work;
  }
  best_work = std::min(best_work, best.second - best.first);
  if (best_work < kLongGap || static_cast<double>(best_work) < kCpuCoverShare * static_cast<double>(best.second - best.first))
    return {};
  return {best};
}
}  // namespace

bool in_warmup_step(const RuleIndex& ix, int64_t ts) {
  const auto& steps = ix.tree.steps();
  return ix.first_step_warmup && ts >= steps.front().ts && ts < steps.front().end;
}

void detect_dataloader_stall(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  RuleFinding f;
  int64_t idle = 0, span_time = 0;
  std::vector<Interval> ivs;
  bool single = false;
  // Without a GPU the model runs on the training thread: while that thread makes the batch,
  // the compute waits just as an idle GPU would, so the loader span itself is the stall.
  const bool cpu_only = ix.gpu.empty();
  ix.dataloader.each_overlapping(t, begin, end, [&](EventId d) {
    const int64_t b = std::max(begin, t.ts[d]), e = std::min(end, t.end(d));
    int64_t here = 0;
    if (cpu_only) here = std::max<int64_t>(0, e - b);
    for (auto iv : ix.idle_gaps_in_steps(b, e)) here += iv.second - iv.first, ivs.push_back(iv);
    if (here == 0) return;
    idle += here;
    span_time += e - b;
    single = single || t.name_of(d).find("SingleProcess") != std::string_view::npos;
    f.events.push_back(d);
  });
  const double range = static_cast<double>(end - begin);
  if (f.events.empty() || static_cast<double>(idle) / range < kStallFireShare) return;
  // Judged on the whole of each span seen, not just the range's part: a 112 us window
  // inside a 3.35 ms fetch shows 112 us of it.
  int64_t whole = 0;
  for (EventId d : f.events) {
    if (cpu_only) whole += t.dur[d];
    for (auto iv : ix.idle_gaps_in_steps(t.ts[d], t.end(d))) whole += iv.second - iv.first;
  }
  if (whole < kMinStall) return;
  // Workers can keep up: a short wait on them is the pipeline's normal handoff. A
  // single-process loader (num_workers=0) makes every batch on the training thread, so each
  // fetch holds the step whatever its length (its severity then says how much it costs).
  if (ix.median_step > 0 && !single) {
    const double per_step = static_cast<double>(whole) / static_cast<double>(f.events.size());
    if (per_step < kStallStepShare * static_cast<double>(ix.median_step)) return;
  }
  f.id = "dataloader_stall";
  f.confidence = confidence_between(static_cast<double>(idle) / range, kStallFireShare, kStallStrongShare);
  f.cost = idle;
  f.begin = std::max(begin, t.ts[f.events.front()]);
  f.end = std::min(end, t.end(f.events.back()));
  const EventId top = f.events.front();
  // "In all" is every span's whole length: with several (a range over the steady state holds
  // one per step), the first one's alone read "82 us in all (6.54 ms in the range)".
  int64_t all_spans = 0;
  for (EventId d : f.events) all_spans += t.dur[d];
  const std::string spans = f.events.size() == 1
                                ? std::string(t.name_of(top))
                                : fmt::format("{} of {}", count_text(f.events.size(), "call"), t.name_of(top));
  f.evidence.push_back(fmt::format("{} {} in all ({} in the range); {} {} during it ({} of the range{})", spans,
                                   dur_text(all_spans), dur_text(span_time),
                                   cpu_only ? "no model compute on the training thread" : "GPU idle", dur_text(idle),
                                   pct_text(static_cast<double>(idle) / range),
                                   // Several calls' idle against one step read as one step's loss:
                                   // gpuzoo_0019's three fetches "29% of a 22.5 ms step", 6.7% a step.
                                   f.events.size() == 1 ? step_share_text(ix, idle) : std::string()));
  // Where the loader's time goes: its heaviest direct children by name.
  std::map<std::string, int64_t> by_child;
  for (EventId d : f.events)
    for (EventId ch : ix.tree.children(d)) by_child[std::string(t.name_of(ch))] += t.dur[ch];
  std::vector<std::pair<int64_t, std::string>> heavy;
  for (auto& [n, ns] : by_child) heavy.emplace_back(ns, n);
  std::sort(heavy.rbegin(), heavy.rend());
  std::string parts;
  for (size_t i = 0; i < heavy.size() && i < 3; ++i)
    parts += fmt::format("{}{} {}", i ? ", " : "", heavy[i].second, dur_text(heavy[i].first));
  if (!parts.empty()) f.evidence.push_back("inside the loader: " + parts);
  if (single) f.evidence.push_back("_SingleProcessDataLoaderIter: the batch is made on the training thread (num_workers=0)");
  f.locations = user_locations(ix, f.events);
  f.fix = single ? fmt::format("DataLoader(num_workers>0 (e.g. 4-8), pin_memory=True, persistent_workers=True) so "
                               "batches are prepared while the GPU trains{}",
                               heavy.empty() ? "" : fmt::format("; {} is the heaviest loader work", heavy[0].second))
                 : fmt::format("the workers do not keep up: raise num_workers and prefetch_factor, make per-sample work "
                               "cheaper{}, or move augmentation to the GPU",
                               heavy.empty() ? "" : fmt::format(" ({} dominates)", heavy[0].second));
  out.explained_idle.insert(out.explained_idle.end(), ivs.begin(), ivs.end());
  out.findings.push_back(std::move(f));
}

void detect_cpu_bound_step(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  if (ix.gpu.empty()) return detect_cpu_bound_step_on_cpu(ix, begin, end, out);  // cpu_op_rules.cpp
  const Trace& t = ix.t;
  // Time in allocator and synchronizing runtime calls is the runtime's, not CPU work.
  std::vector<Interval> runtime = out.explained_idle;
  for (const SpanList* l : {&ix.allocs, &ix.syncs})
    l->each_overlapping(t, begin, end, [&](EventId c) { runtime.emplace_back(t.ts[c], t.end(c)); });
  const std::vector<Interval> explained = merge_intervals(std::move(runtime));
  std::vector<Interval> pieces;
  std::vector<EventId> read_of;  // per piece: the read of device values the host works on after, or kNoEvent
  // In steps: preprocessing that opens an inference step (decoding video, an image
  // processor) runs before its first kernel, and the step waits on it all the same.
  for (auto gap : ix.whole_idle_gaps(begin, end, true)) {
    if (gap.second - gap.first < kLongGap || in_warmup_step(ix, gap.first)) continue;
    const EventId read = read_before_host_work(ix, gap);
    for (auto p : uncovered(explained, std::max(gap.first, begin), std::min(gap.second, end))) {
      pieces.push_back(p);
      read_of.push_back(read);
    }
  }
  if (pieces.empty()) return;
  RuleFinding f;
  int64_t idle = 0;
  std::map<std::string, Culprit> by_culprit;
  std::vector<Interval> used;
  EventId worst = kNoEvent;
  int64_t worst_ns = 0;
  int64_t capture_ns = 0;  // of the idle, the part the host spent capturing CUDA graphs
  bool on_main_thread = false, on_loop_thread = false, on_engine_thread = false;  // whose work the culprits are
  // Of the idle, the part counted from gaps the CPU work holds only part of (see below).
  int64_t partial_ns = 0, partial_gaps_ns = 0;
  size_t gaps_used = 0;
  // Idle while the host runs nothing the profiler records, right after it read device values
  // (host_sync leaves it, kSyncResumeSlack): work on what it read, outside any op.
  int64_t unprofiled_ns = 0;
  EventId unprofiled_read = kNoEvent;
  for (size_t pi = 0; pi < pieces.size(); ++pi) {
    // Named, not a structured binding: the lambdas below use them, which clang 14 refuses.
    const int64_t b = pieces[pi].first, e = pieces[pi].second;
    // Runtime calls (syncs, allocations) are not CPU work, and an op that launches GPU work
    // but is slow to get there (host contention, a first call) is not "work that launches
    // nothing": gpu_idle reports those with what the host did.
    int64_t cover = 0;
    std::vector<std::pair<EventId, int64_t>> quiet;
    auto found = [&](EventId ev, int64_t o) {
      cover += o;
      quiet.emplace_back(ev, o);
    };
    // The launching thread's work, then the training loop's own thread when that is another
    // (DDP: the autograd thread launches the backward, the loop's metrics run on its thread).
    const auto judge = [&](const SpanList& top, bool any_thread) {
      top.each_overlapping(t, b, e, [&](EventId ev) {
        // The loader's time is dataloader_stall's, whatever it does inside; a collective's
        // wait is communication's.
        if (is_launch(t.category[ev]) || ix.has(ev, kDataLoader | kCommWait | kBackwardCall)) return;
        const bool launches = launches_from(ix, ev, any_thread);
        if (!launches && !is_module_marker(ix, ev)) {
          found(ev, overlap(t.ts[ev], t.end(ev), b, e));
          return;
        }
        quiet_work(ix, ev, b, e, found, any_thread);
        if (!launches)
          if (const int64_t own = own_code_time(ix, ev, b, e); own > 0) found(ev, own);
      });
    };
    judge(ix.main_top, false);
    judge(ix.step_top, true);
    // The backward pass on the autograd engine's own thread, while loss.backward() waits.
    judge(ix.autograd_top, false);
    // The idle this piece gives: the whole gap when the work covers most of it; else, when the
    // work that launches nothing holds at least a long gap's worth of it (a step's numpy
    // statistics running into the step boundary, where the profiler's step and the next fetch
    // take the rest: gpuzoo_0023), the time the host is in that work, and the rest stays
    // gpu_idle's. Less than that is a slow op or two in a gap something else holds.
    std::vector<Interval> held{{b, e}};
    if (quiet.empty() || static_cast<double>(cover) < kCpuCoverShare * static_cast<double>(e - b)) {
      const EventId read = read_of[pi];
      // Profiled events that launch (the next step's first op) are not the quiet stretch:
      // the part after the read returned with nothing recorded is.
      const int64_t from = read == kNoEvent ? e : std::max(b, t.ts[read] + t.dur[read]);
      int64_t recorded = 0;
      if (e > from)
        ix.main_top.each_overlapping(t, from, e, [&](EventId ev) { recorded += overlap(t.ts[ev], t.end(ev), from, e); });
      if (e > from && static_cast<double>(recorded) < kCpuCoverShare * static_cast<double>(e - from)) {
        idle += e - from;
        unprofiled_ns += e - from;
        used.emplace_back(from, e);
        ++gaps_used;
        if (unprofiled_read == kNoEvent) unprofiled_read = read;
        continue;
      }
      const std::vector<Interval> in_work = work_stretch(ix, quiet, b, e);
      if (in_work.empty()) continue;
      held = in_work;
      partial_ns += idle_of(in_work);
      partial_gaps_ns += e - b;
      // The culprits are the work in those stretches, for their time there.
      std::erase_if(quiet, [&](auto& q) {
        q.second = std::min(q.second, covered(held, t.ts[q.first], t.end(q.first)));
        return q.second == 0;
      });
    }
    ++gaps_used;
    for (auto [hb, he] : held) {
      idle += he - hb;
      used.emplace_back(hb, he);
    }
    int64_t captured_here = 0;
    for (auto [ev, o] : quiet) {
      if (ix.in_graph_capture(ev)) captured_here += o;
      (t.track[ev] == ix.main_thread ? on_main_thread : t.track[ev] == ix.step_thread ? on_loop_thread : on_engine_thread) = true;
      Culprit& c = by_culprit[std::string(t.name_of(ev))];
      c.ns += o;
      if (std::find(c.calls.begin(), c.calls.end(), ev) == c.calls.end()) c.calls.push_back(ev);
      c.longest = std::max(c.longest, t.dur[ev]);
      if (o > worst_ns) worst_ns = o, worst = ev;
      if (f.events.size() < 256 && std::find(f.events.begin(), f.events.end(), ev) == f.events.end()) f.events.push_back(ev);
    }
    capture_ns += std::min(captured_here, idle_of(held));
  }
  const double range = static_cast<double>(end - begin);
  if (unprofiled_read != kNoEvent && f.events.empty()) f.events.push_back(unprofiled_read);
  if (f.events.empty() || static_cast<double>(idle) / range < kCpuFireShare) return;
  f.id = "cpu_bound_step";
  f.confidence = confidence_between(static_cast<double>(idle) / range, kCpuFireShare, kCpuStrongShare);
  f.cost = idle;
  f.begin = used.front().first;
  f.end = used.back().second;
  f.spans = used;
  std::stable_sort(f.events.begin(), f.events.end(), [&](EventId a, EventId b) { return a == worst && b != worst; });
  std::vector<std::string_view> whose;
  if (on_main_thread) whose.push_back("the main thread");
  if (on_loop_thread) whose.push_back("the training loop's thread (not the one that launches most)");
  if (on_engine_thread) whose.push_back("the autograd engine's thread (the backward pass)");
  // No thread's culprit: the idle is all unprofiled code after a read (the line below says so).
  const std::string who = whose.empty() ? std::string("the host runs unprofiled")
                                        : fmt::format("{} {}", fmt::join(whose, " and "), whose.size() == 1 ? "runs" : "run");
  f.evidence.push_back(fmt::format("GPU idle {} ({} of the range) in {} of at least {} while {} CPU work that launches "
                                   "nothing",
                                   dur_text(idle), pct_text(static_cast<double>(idle) / range), count_text(gaps_used, "gap"),
                                   dur_text(kLongGap), who));
  std::vector<std::pair<int64_t, std::string>> by;
  for (auto& [n, c] : by_culprit) by.emplace_back(c.ns, n);
  std::sort(by.rbegin(), by.rend());
  for (size_t i = 0; i < by.size() && i < 3; ++i) f.evidence.push_back(culprit_text(t, by[i].second, by_culprit[by[i].second]));
  const EventId read_op = unprofiled_read == kNoEvent ? kNoEvent : ix.enclosing_op(unprofiled_read);
  const std::string read_name = unprofiled_read == kNoEvent ? ""
                                : read_op == kNoEvent   ? std::string(t.name_of(unprofiled_read))
                                                        : fmt::format("{} under {}", t.name_of(unprofiled_read), t.name_of(read_op));
  if (unprofiled_ns > 0)
    f.evidence.push_back(fmt::format("{} of that idle with nothing profiled on the main thread after {} ({}) returned "
                                     "the device values it read: host code the profiler does not record (numpy, plain "
                                     "Python)",
                                     dur_text(unprofiled_ns), read_name, dur_text(t.dur[unprofiled_read])));
  if (partial_ns > 0)
    f.evidence.push_back(fmt::format("{} of that idle is the part of longer gaps ({} in all) that the host spends in that "
                                     "work; the rest of them is not counted here",
                                     dur_text(partial_ns), dur_text(partial_gaps_ns)));
  if (capture_ns > 0)
    f.evidence.push_back(fmt::format("{} of that idle during CUDA graph capture: kernels launched while a graph is "
                                     "captured are recorded into it, not run",
                                     dur_text(capture_ns)));
  f.locations = user_locations(ix, f.events);
  if (by.empty()) {
    f.fix = fmt::format("the host works {} after reading device values with {}{} before it launches again: compute "
                        "those statistics on the device with torch ops (torch.quantile, torch.histc, torch.mean) and "
                        "read one small result every N steps, or hand the copied values to a background thread",
                        dur_text(unprofiled_ns), read_op == kNoEvent ? t.name_of(unprofiled_read) : t.name_of(read_op),
                        at_text(f.locations));
    out.explained_idle.insert(out.explained_idle.end(), used.begin(), used.end());
    out.findings.push_back(std::move(f));
    return;
  }
  // The fix is for the culprit that holds the most idle; when capture holds no more than half
  // of it, for the one that holds the most outside capture (the host's work after a capture
  // ends is not warm-up, and its fix is not "profile after capture").
  const auto all_captured = [&](const Culprit& c) {
    return std::all_of(c.calls.begin(), c.calls.end(), [&](EventId e) { return ix.in_graph_capture(e); });
  };
  size_t top_at = 0;
  if (2 * capture_ns <= idle)
    while (top_at + 1 < by.size() && all_captured(by_culprit[by[top_at].second])) ++top_at;
  const std::string& top_name = by[top_at].second;
  const Culprit& top = by_culprit[top_name];
  // Where the named culprit runs (the finding's first location is that of its costliest call).
  const std::vector<CodeLocation> top_locs = top_at == 0 ? f.locations : user_locations(ix, top.calls);
  const std::string where = top_locs.empty() ? "" : fmt::format(" ({}:{})", top_locs[0].file, top_locs[0].line);
  // What helps depends on what the culprit is. Capturing a CUDA graph and a compiled
  // graph's host side are not input-pipeline work that a DataLoader worker could take.
  const bool captured = all_captured(top);
  const bool compiled_call = ix.has(top.calls.front(), kCompiledCall | kCompiledRegion);
  // DDP's forward broadcasts the module's buffers from rank 0 (broadcast_buffers=True, the
  // default), flattening them into buckets and unflattening them back, on the host.
  const bool ddp_buffers = (top_name == "aten::unflatten_dense_tensors" || top_name == "aten::flatten_dense_tensors") &&
                           under_ddp_forward(ix, top.calls.front());
  const bool zero_grad = ix.has(top.calls.front(), kZeroGrad);
  // torch.optim's own Python inside Optimizer.step (gathering the parameters and their state
  // for the update, _init_group): part of the step, not work a DataLoader worker could take.
  // Adam's and AdamW's per-parameter step counters are CPU tensors unless the optimizer is
  // fused or capturable: each step adds one to every counter (gpuzoo_0021's 0.8 ms
  // aten::_foreach_add_ of 192 aten::add_) and reads each back for the bias correction
  // (aten::item), on the host while the GPU waits. Not a DataLoader's work either.
  EventId optimizer_step = kNoEvent;
  for (EventId p = top.calls.front(); p != kNoEvent && optimizer_step == kNoEvent; p = ix.tree.parent(p))
    if (ix.has(p, kOptimizerStep)) optimizer_step = p;
  const bool optimizer_python = optimizer_step != kNoEvent && t.category[top.calls.front()] == Category::PythonFunction;
  const bool adam_step_counters = optimizer_step != kNoEvent && t.category[top.calls.front()] == Category::CpuOp &&
                                  t.name_of(optimizer_step).find("Adam") != std::string_view::npos &&
                                  (top_name == "aten::_foreach_add_" || top_name == "aten::add_" || top_name == "aten::item" ||
                                   top_name == "aten::_local_scalar_dense");
  // Many short calls are per-op overhead, not one piece of work to move elsewhere.
  const bool many_short = top.calls.size() > 1 && top.longest * 4 < top.ns;
  const bool metadata = !many_short && tensor_setup_op(top_name);
  // The autograd engine's own work per node of the backward graph (views, reshapes and
  // other nodes that launch nothing): overhead of running the backward op by op.
  const bool engine_nodes = ix.has(top.calls.front(), kAutogradOp);
  // The profiler's own bookkeeping: a record_function range entered or left, torch.profiler's
  // step(). gpuzoo_0051's 1.43 ms pybind call under torch/autograd/profiler.py's __enter__
  // (ProfilerStep#3 opening) read "move <built-in method _record_function_enter_new of
  // pybind11_builtins...> off the step path": no user code to move.
  EventId profiler_frame = kNoEvent;
  for (EventId p = top.calls.front(); p != kNoEvent && profiler_frame == kNoEvent; p = ix.tree.parent(p))
    if (ix.has(p, kProfilerFrame)) profiler_frame = p;
  if (captured)
    f.fix = fmt::format("{}{} runs during CUDA graph capture, one-time warm-up work (the captured kernels run later, "
                        "on replay): profile after capture (warm up first, then record with torch.profiler.schedule("
                        "wait=..., warmup=..., active=...)); if capture recurs in the steady state, inputs come in "
                        "shapes not captured yet: pad them to the captured sizes",
                        top_name, where);
  else if (profiler_frame != kNoEvent)
    f.fix = fmt::format("{}{} is the profiler's own bookkeeping (entering or leaving a record_function range), host "
                        "time only a profiled run spends, not the step's work: there is nothing in the step to move; "
                        "judge the step by its other findings",
                        t.name_of(profiler_frame), where);
  else if (compiled_call)
    f.fix = fmt::format("the GPU waits on {}{}, a torch.compile'd graph's host side (its Python wrapper, guard checks "
                        "and kernel launches): replay it as a CUDA graph (torch.compile(mode=\"reduce-overhead\")), "
                        "and remove graph breaks (torch._dynamo.explain) so fewer compiled regions, each with its own "
                        "call overhead, run per step",
                        top_name, where);
  else if (ddp_buffers)
    f.fix = fmt::format("{} is DistributedDataParallel's buffer broadcast at each forward (broadcast_buffers=True, "
                        "the default): DistributedDataParallel(..., broadcast_buffers=False) when the module's buffers "
                        "(BatchNorm statistics) need no sync every step, or keep buffers few and small",
                        top_name);
  else if (zero_grad)
    f.fix = fmt::format("{}{} launches nothing (gradients set to None): its host time is a loop over the parameters "
                        "while the GPU has no work queued; call it where kernels are still queued (right after "
                        "optimizer.step()), or compile the optimizer step and zero_grad with torch.compile",
                        top_name, where);
  else if (optimizer_python)
    f.fix = fmt::format("{}{} is the optimizer's per-step Python over the parameters, run while the GPU has no work "
                        "queued: compile the optimizer step (call optimizer.step() from a function wrapped in "
                        "torch.compile), or capture the whole step in a CUDA graph (Adam/AdamW(..., capturable=True) "
                        "with torch.cuda.graph)",
                        top_name, where);
  else if (adam_step_counters)
    f.fix = fmt::format("{}{} runs on the CPU inside {}, launching nothing, while the GPU has no work queued: Adam "
                        "and AdamW keep each parameter's step count in a CPU tensor, add to it and read it back every "
                        "step, unless constructed with fused=True or capturable=True (counts on the device); "
                        "construct the optimizer with fused=True, or compile the optimizer step with torch.compile",
                        top_name, where, t.name_of(optimizer_step));
  else if (engine_nodes)
    f.fix = fmt::format("{} is the autograd engine's per-node work in the backward pass ({}), launching nothing "
                        "while the GPU waits: run the backward as fewer, larger ops (torch.compile compiles the "
                        "backward graph too) or capture the whole step in a CUDA graph (torch.compile(mode=\"reduce-"
                        "overhead\"))",
                        top_name, count_text(top.calls.size(), "call"));
  else if (metadata)
    f.fix = fmt::format("{}{} computes nothing (it sets up a tensor or a view), so there is no work to move: the host "
                        "is slow between launches here, from per-op overhead (Python, the dispatcher) or a busy CPU "
                        "(other processes or threads on these cores); capture the step in a CUDA graph (torch.compile("
                        "mode=\"reduce-overhead\")) so the GPU does not wait on it, and keep the training threads on "
                        "free cores",
                        top_name, where);
  else
    f.fix = many_short
              ? fmt::format("the host spends the idle in {} short {} calls{}: do that work in fewer, larger ops (batch "
                            "per-tensor loops with torch._foreach_* or one op over a flattened tensor), or move it off "
                            "the step path",
                            top.calls.size(), top_name, where)
              : fmt::format("move {}{} off the step path (into DataLoader workers or a background thread) or onto the "
                            "GPU; avoid numpy/Python work per step",
                            top_name, where);
  out.explained_idle.insert(out.explained_idle.end(), used.begin(), used.end());
  out.findings.push_back(std::move(f));
}

void detect_launch_bound(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  // The kernels are judged over at least kLaunchContext around the range: a 122 us window
  // of an eager stretch holds 6 kernels of 3 us, too few to judge alone, though every one
  // is shorter than its launch call and the GPU idles 85% of the window.
  const int64_t mid = begin + (end - begin) / 2;
  const int64_t ctx_b = std::min(begin, mid - kLaunchContext / 2), ctx_e = std::max(end, mid + kLaunchContext / 2);
  auto [lo, hi] = ix.gpu_range(ctx_b, ctx_e);
  size_t kernels = 0, short_kernels = 0, left_out = 0;
  int64_t call_time = 0;
  std::map<std::string, int64_t> short_by_op;
  std::vector<int64_t> durs;
  for (size_t i = lo; i < hi; ++i) {
    const EventId g = ix.gpu[i];
    if (t.category[g] != Category::Kernel || !ix.on_primary(g)) continue;
    // optimizer_single_tensor / grad_not_set_to_none explain the optimizer's; collectives
    // are not launch-bound. The count says it leaves them out: kineto nw4's window read
    // "31 kernels in the range" where 130 ran, 99 of them SGD's per-parameter kernels.
    if (ix.has(g, kCommKernel) || ix.gpu_in_optimizer[i]) {
      ++left_out;
      continue;
    }
    ++kernels;
    durs.push_back(t.dur[g]);
    const EventId l = ix.tree.launcher(g);
    if (l == kNoEvent) continue;
    call_time += t.dur[l];
    if (t.dur[g] < t.dur[l]) {
      ++short_kernels;
      const EventId op = ix.tree.owner_op(g);
      short_by_op[op == kNoEvent ? std::string("(no op)") : std::string(t.name_of(op))] += 1;
    }
  }
  if (kernels < kMinKernels) return;
  const bool launch_calls_exposed = static_cast<double>(short_kernels) >= kMinShortShare * static_cast<double>(kernels);
  // Judged on kernels around it, a short range must show most launch calls exposed: host
  // work between launches is too common in eager code (a ViT inference step) to call from a
  // glimpse; the whole step judges that.
  const bool widened = ctx_b < begin || ctx_e > end;
  if (widened && static_cast<double>(short_kernels) < kWidenedShortShare * static_cast<double>(kernels)) return;
  // Short gaps that end when a freshly launched kernel arrives: the GPU waited on the CPU.
  int64_t starved = 0;
  size_t starved_gaps = 0;
  std::vector<Interval> ivs;
  std::vector<EventId> events;
  // Gaps whose kernel a more specific pattern launched (a dtype cast, a layout copy, the
  // next link of an elementwise chain) are that pattern's cost, not launch_bound's.
  // A gap that runs past the range's end counts too, for its part inside: the range sees the
  // host on its way to that launch (a window of a few microseconds between two launches of
  // an eager loop sees only idle, whose cause is the launch that ends it).
  const std::vector<Interval>& caused = out.caused_launch_gaps;
  for (const LaunchGap& gap : launch_gaps(ix, begin, end, true)) {
    if (gap.whole >= kLongGap) continue;
    if (std::find(caused.begin(), caused.end(), Interval{gap.begin, gap.end}) != caused.end()) continue;
    starved += gap.end - gap.begin;
    ++starved_gaps;
    ivs.emplace_back(gap.begin, gap.end);
    if (events.size() < 256) events.push_back(ix.gpu[gap.next]);
  }
  // Long gaps (stall-sized) that no pattern before explains hold the same cause when the host
  // spends them dispatching ops that launch, one after another (idle_parts' dispatch: eager
  // mode's per-op host work, gpuzoo_0033's ResNet-50 inference at batch 8 spending 150-200 us
  // in each aten::conv2d and aten::batch_norm before its kernels exist). That time is this
  // pattern's whatever the gap's length; the rest of such a gap (nothing recorded, work queued
  // that the GPU did not start, one slow op) stays gpu_idle's.
  const std::vector<Interval> explained = merge_intervals(out.explained_idle);
  IdleParts eager;
  size_t eager_gaps = 0;
  for (auto gap : ix.whole_idle_gaps(begin, end)) {
    if (gap.second - gap.first < kLongGap || in_warmup_step(ix, gap.first)) continue;
    IdleParts in_gap;
    for (auto [pb, pe] : uncovered(explained, std::max(gap.first, begin), std::min(gap.second, end)))
      in_gap.add(idle_parts_of(ix, gap, pb, pe, out));
    if (in_gap.dispatch == 0) continue;
    ++eager_gaps;
    eager.add(in_gap);
  }
  ivs.insert(ivs.end(), eager.dispatch_spans.begin(), eager.dispatch_spans.end());
  std::sort(ivs.begin(), ivs.end());
  const double range = static_cast<double>(end - begin);
  const double share = static_cast<double>(starved + eager.dispatch) / range;
  if (ivs.empty() || share < (launch_calls_exposed ? kStarvedFireShare : kOverheadFireShare)) return;
  RuleFinding f;
  f.id = "launch_bound";
  f.confidence = confidence_between(share, kStarvedFireShare, kStarvedStrongShare);
  f.cost = starved + eager.dispatch;
  f.begin = ivs.front().first;
  f.end = ivs.back().second;
  f.spans = ivs;
  // The kernels that end its short gaps; with none, the ops it dispatched in the long ones.
  f.events = events.empty() ? eager.dispatch_ops : std::move(events);
  std::nth_element(durs.begin(), durs.begin() + static_cast<std::ptrdiff_t>(durs.size() / 2), durs.end());
  f.evidence.push_back(fmt::format("{} kernels {}{}, {} ({}) shorter than their launch call (mean call {}); "
                                   "median kernel {}, {:.1f} launches per ms",
                                   kernels, widened ? fmt::format("in the {} around the range", dur_text(ctx_e - ctx_b))
                                                    : std::string("in the range"),
                                   left_out > 0 ? fmt::format(" (besides {} of the optimizer step or collectives)", left_out) : "",
                                   short_kernels, pct_text(static_cast<double>(short_kernels) / static_cast<double>(kernels)),
                                   dur_text(call_time / static_cast<int64_t>(kernels)), dur_text(durs[durs.size() / 2]),
                                   static_cast<double>(kernels) / (static_cast<double>(ctx_e - ctx_b) / 1e6)));
  if (starved_gaps > 0)
    f.evidence.push_back(fmt::format("GPU idle {} ({} of the range) in {} under {} that end as soon as the next "
                                     "launch arrives (idle-queue launch latency {})",
                                     dur_text(starved), pct_text(static_cast<double>(starved) / range),
                                     count_text(starved_gaps, "gap"), dur_text(kLongGap), dur_text(ix.launch_latency)));
  if (eager.dispatch > 0)
    f.evidence.push_back(fmt::format("the host in the long gaps: {} dispatching ops that launch GPU work ({}), {} of "
                                     "host time per op on average, in {} of at least {} ({} of the range): eager mode's "
                                     "per-op host work (Python, the dispatcher, allocation) keeps the GPU waiting, not one "
                                     "slow op",
                                     dur_text(eager.dispatch), ops_tally_text(ix, eager.dispatch_ops),
                                     dur_text(eager.dispatch / static_cast<int64_t>(std::max<size_t>(1, eager.dispatch_ops.size()))),
                                     count_text(eager_gaps, "gap"), dur_text(kLongGap),
                                     pct_text(static_cast<double>(eager.dispatch) / range)));
  if (!launch_calls_exposed)
    f.evidence.push_back("most kernels outlast their launch call: the host's work between launches (Python, the "
                         "dispatcher, op setup), not the launch call itself, keeps the GPU waiting");
  std::string top;
  int64_t top_n = 0;
  for (auto& [op, n] : short_by_op)
    if (n > top_n) top_n = n, top = op;
  if (!top.empty()) {
    // "most" only where one op holds more than half of them: gpuzoo_0018's 1460 short kernels
    // read "most short kernels come from aten::copy_ (302)", a fifth of them.
    size_t tied = 0;
    for (auto& [op, n] : short_by_op) tied += n == top_n && op != top;
    const std::string of = fmt::format("{} of {}", top_n, short_kernels);
    const bool no_op = short_by_op.count("(no op)") > 0;
    const size_t ops = short_by_op.size() - (no_op ? 1 : 0);
    const std::string where = (ops > 0 ? count_text(ops, "op") : std::string()) +
                              (no_op ? (ops > 0 ? " and outside any op" : "outside any op") : "");
    if (2 * static_cast<size_t>(top_n) > short_kernels)
      f.evidence.push_back(top == "(no op)" ? fmt::format("most short kernels ({}) are launched outside any op", of)
                                            : fmt::format("most short kernels come from {} ({})", top, of));
    else if (tied > 0)
      f.evidence.push_back(fmt::format("short kernels come from {}, at most {} from any one ({} and {} other{})", where, of,
                                       top == "(no op)" ? "outside any op" : top, tied, tied == 1 ? "" : "s"));
    else
      f.evidence.push_back(fmt::format("short kernels come from {}, the most {} ({})", where,
                                       top == "(no op)" ? "outside any op" : "from " + top, of));
    if (tied > 0) top.clear();  // no op to start with in the fix
  }
  f.locations = user_locations(ix, f.events);
  f.fix = fmt::format("cut per-kernel launch cost: capture the step in a CUDA graph (torch.compile(mode="
                      "\"reduce-overhead\") or torch.cuda.CUDAGraph), fuse small ops{}, or raise the batch size so "
                      "each kernel does more work",
                      top.empty() || top == "(no op)" ? "" : fmt::format(" (starting with the {} {} kernels)", top_n, top));
  out.explained_idle.insert(out.explained_idle.end(), ivs.begin(), ivs.end());
  out.dispatch_idle = merge_intervals(std::move(eager.dispatch_spans));
  out.findings.push_back(std::move(f));
}

void detect_gpu_idle(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  const std::vector<Interval>& explained = out.explained_idle;  // merged by the engine
  std::vector<Interval> pieces;
  std::vector<Interval> whole;  // the whole gap each piece lies in, sorted by start
  int64_t idle = 0;
  size_t gaps = 0;  // the whole gaps that hold pieces
  for (auto gap : ix.whole_idle_gaps(begin, end)) {
    if (gap.second - gap.first < kLongGap || in_warmup_step(ix, gap.first)) continue;
    whole.push_back(gap);
    const size_t before = pieces.size();
    for (auto p : uncovered(explained, std::max(gap.first, begin), std::min(gap.second, end)))
      pieces.push_back(p), idle += p.second - p.first;
    gaps += pieces.size() > before;
  }
  const double range = static_cast<double>(end - begin);
  if (pieces.empty() || static_cast<double>(idle) / range < kIdleFireShare) return;
  RuleFinding f;
  f.id = "gpu_idle";
  f.confidence = std::min(kIdleMaxConfidence, 0.3 + 0.4 * ramp(static_cast<double>(idle) / range, kIdleFireShare,
                                                               kIdleStrongShare));
  f.cost = idle;
  f.begin = pieces.front().first;
  f.end = pieces.back().second;
  f.spans = pieces;
  std::vector<EventId> held, resumed;
  bool any_queued = false;
  f.evidence.push_back(fmt::format("GPU idle {} ({} of the range) in {} of at least {} that no specific pattern "
                                   "explains",
                                   dur_text(idle), pct_text(static_cast<double>(idle) / range), count_text(gaps, "gap"),
                                   dur_text(kLongGap)));
  // What the host and the GPU did about the idle [b, e) (a piece of a gap, or a gap as a line
  // names it).
  struct GapReading {
    EventId top = kNoEvent;  // the top-level host event that holds most of it
    int64_t best = 0;        // its time there
    bool on_loop_thread = false;
    EventId frame = kNoEvent;  // the innermost user frame under top
    bool cut_short = false;
    EventId next = kNoEvent;   // the GPU event that ends it
    int64_t queued = 0;
    bool held_queued = false;
  };
  const auto read_gap = [&](int64_t b, int64_t e) {
    GapReading r;
    const auto widest = [&](const SpanList& tops) {
      tops.each_overlapping(t, b, e, [&](EventId ev) {
        const int64_t o = overlap(t.ts[ev], t.end(ev), b, e);
        if (o > r.best) r.best = o, r.top = ev;
      });
    };
    widest(ix.main_top);
    // In training the autograd thread launches most and is the "main" one; between backward
    // passes it is idle while the loop's own thread runs the optimizer or zero_grad, and "no
    // profiled work" would be untrue.
    r.on_loop_thread = r.top == kNoEvent && !ix.step_top.events.empty();
    if (r.on_loop_thread) widest(ix.step_top);
    // The gap goes on past this piece when a more specific pattern explains the rest of it
    // (the host's wait in a pageable upload or in zero_grad): then the GPU does not resume
    // here, nor stay idle to the range's end on this finding's account.
    const auto in_gap = std::upper_bound(whole.begin(), whole.end(), Interval{b, INT64_MAX}) - 1;  // whole[0] starts at or before b
    r.cut_short = e < end && e < in_gap->second;
    // The GPU event that ends the gap and what launched it: where the host resumed.
    auto [k, kend] = r.cut_short ? std::pair<size_t, size_t>{0, 0} : ix.gpu_range(e, e + 1);
    r.next = k < kend ? ix.gpu[k] : kNoEvent;
    // A gap the host did not cause: the kernel that ends it had been launched long before it
    // started, the device idle all the while. What held it is not in the trace (another
    // process on the GPU, or records a sampled trace dropped), and the host frame above is
    // not to blame for it.
    const EventId launch = r.next == kNoEvent ? kNoEvent : ix.tree.launcher(r.next);
    r.queued = launch == kNoEvent ? 0 : t.ts[r.next] - t.end(launch);
    r.held_queued = r.queued >= kQueuedUnrunGap && t.end(launch) >= in_gap->first;
    // The frame named is the innermost user frame that held most of the gap.
    r.frame = r.top == kNoEvent ? kNoEvent : user_frame_at(ix, r.top, b, e);
    return r;
  };
  // The blame goes to what held gpu_idle's own idle, its two longest pieces: the host frame the
  // main thread was in, not the op whose kernel ended it. Only with no profiled host work there
  // does the resuming op name the place. Where the main thread's recorded work held less than
  // half the piece, no frame held it (gpuzoo_0005: "in aten::stack for 0.1 us" of a 286 us gap
  // named the finding "in aten::stack"): most of it is host work the profiler does not record,
  // which names nothing, nor does the op whose kernel ended it.
  std::vector<Interval> longest = pieces;
  std::stable_sort(longest.begin(), longest.end(),
                   [](const Interval& a, const Interval& b) { return a.second - a.first > b.second - b.first; });
  for (size_t i = 0; i < longest.size() && i < 2; ++i) {
    auto [b, e] = longest[i];
    const GapReading r = read_gap(b, e);
    any_queued = any_queued || r.held_queued;
    if (r.top != kNoEvent && 2 * r.best < e - b) continue;
    if (r.frame != kNoEvent && t.category[r.frame] != Category::DataLoader && !t.name_of(r.frame).starts_with("ProfilerStep#"))
      held.push_back(r.frame);
    else if (r.next != kNoEvent)
      resumed.push_back(r.next);
  }
  // The lines name the gaps as the trace has them: launch_bound's dispatch cuts the idle
  // gpu_idle counts, not the gap a user measures (hta_ddp_a100_nccl's 5.34 ms gap whose first
  // 28 us are DDP's copy_bucket_to_grad dispatching its copy read "5.32 ms gap"), so its part
  // joins the pieces beside it and the line says how much of the gap it is. Parts other
  // patterns explain stay out (the line says the GPU stays idle after it). Those holding most of
  // gpu_idle's idle first.
  std::vector<Interval> shown;
  for (const Interval& g : merge_intervals([&] {
         std::vector<Interval> all = pieces;
         all.insert(all.end(), out.dispatch_idle.begin(), out.dispatch_idle.end());
         return all;
       }()))
    if (covered(pieces, g.first, g.second) > 0) shown.push_back(g);  // pieces are sorted and disjoint
  std::stable_sort(shown.begin(), shown.end(), [&](const Interval& a, const Interval& b) {
    return covered(pieces, a.first, a.second) > covered(pieces, b.first, b.second);
  });
  for (size_t i = 0; i < shown.size() && i < 2; ++i) {
    auto [b, e] = shown[i];
    const GapReading r = read_gap(b, e);
    const EventId op = r.next == kNoEvent ? kNoEvent : ix.tree.owner_op(r.next);
    // The time given is the named frame's part of the gap.
    const std::string frame_text =
        r.top == kNoEvent ? std::string("main thread shows no profiled work")
                          : fmt::format("{} in {} for {} of it",
                                        r.on_loop_thread ? "main thread shows no profiled work, the training loop's thread"
                                                         : "main thread",
                                        t.name_of(r.frame), dur_text(overlap(t.ts[r.frame], t.end(r.frame), b, e)));
    const int64_t dispatch = covered(out.dispatch_idle, b, e);
    f.evidence.push_back(fmt::format("{} gap{} at +{} from the range start: {}; {}{}", dur_text(e - b),
                                     dispatch > 0 ? fmt::format(" ({} of it dispatch, launch_bound's)", dur_text(dispatch))
                                                  : std::string(),
                                     dur_text(b - begin), frame_text,
                                     r.cut_short ? std::string("the GPU stays idle after it, that part counted by a more specific "
                                                               "finding in this range")
                                     : r.next == kNoEvent ? std::string("the GPU stays idle to the end of the range")
                                                          : "the GPU resumes with " + (op != kNoEvent ? std::string(t.name_of(op))
                                                                                                      : readable_kernel_name(t.name_of(r.next))),
                                     r.held_queued ? fmt::format(", whose kernel had been launched {} before it started with "
                                                                 "nothing in this trace running on the device meanwhile: the "
                                                                 "host had already queued it",
                                                                 dur_text(r.queued))
                                                   : std::string("")));
    any_queued = any_queued || r.held_queued;
  }
  IdleParts parts;
  for (auto [b, e] : f.spans)
    parts.add(idle_parts_of(ix, *(std::upper_bound(whole.begin(), whole.end(), Interval{b, INT64_MAX}) - 1), b, e, out));
  f.evidence.push_back(idle_parts_text(ix, parts));
  // Most of it with work queued that the GPU did not start: the host is not what to look at.
  any_queued = any_queued || 2 * parts.queued > idle;
  f.events = held.empty() ? resumed : held;
  f.locations = user_locations(ix, f.events);
  f.fix = "look at the CPU side of these gaps (ttap tree around them): unprofiled Python, waits on other processes or "
          "I/O, or work on another thread; keep the GPU queue fed by launching the next step's work earlier";
  if (any_queued)
    f.fix += "; where a launched kernel waited on an idle device, look at what the trace does not show: other processes "
             "sharing the GPU (nvidia-smi), or GPU records the trace lacks";
  // Where one kind of host work holds most of the idle, the fix is that kind's, not the search for
  // unprofiled code (torchrec's blocking copies under its input dist, a slow first backward op).
  if (std::string specific = idle_parts_fix(ix, parts, idle); !specific.empty()) f.fix = std::move(specific);
  out.findings.push_back(std::move(f));
}

}  // namespace ttap::rules
