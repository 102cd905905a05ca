// What the host was doing during a GPU idle gap (issue 12 item 1: "for its GPU idle gaps, what
// the host was doing then"): the gap's time split by what the launching threads were in. A
// gap that the specific patterns (a sync, the allocator, a copy, the loader, CPU work) do not
// explain is still not one thing: on a fast GPU at small batch part of it is the host
// dispatching the next op (aten::batch_norm's 150 us of dispatcher and allocator work before
// its first launch), part holds nothing the profiler records, and in much of it the GPU had
// work queued that it did not start (over the GPU zoo's dev recordings 12%, 26% and 36% of that
// idle, scripts/bench/idle_gap_breakdown.py). Each of those has its own cause and its own fix.
#include <algorithm>
#include <climits>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rule_index.hpp"
#include "ttap/convolution_ops.hpp"

namespace ttap::rules {

bool launches_from(const RuleIndex& ix, EventId e, bool any_thread) {
  auto [lo, hi] = ix.launch_range(ix.t.ts[e], ix.t.end(e));
  if (any_thread) return lo < hi;
  for (size_t k = lo; k < hi; ++k)
    if (ix.t.track[ix.tree.launcher(ix.gpu[ix.launch_gpu[k]])] == ix.t.track[e]) return true;
  return false;
}

namespace {

// The launches `e`'s thread issued while it ran.
size_t launches_in(const RuleIndex& ix, EventId e) {
  auto [lo, hi] = ix.launch_range(ix.t.ts[e], ix.t.end(e));
  size_t n = 0;
  for (size_t k = lo; k < hi; ++k) n += ix.t.track[ix.tree.launcher(ix.gpu[ix.launch_gpu[k]])] == ix.t.track[e];
  return n;
}

// The parts of [b, e) that `ivs` (merged) covers and `claimed` (merged) does not.
std::vector<Interval> newly_covered(const std::vector<Interval>& ivs, const std::vector<Interval>& claimed, int64_t b,
                                    int64_t e) {
  std::vector<Interval> out;
  for (auto [pb, pe] : uncovered(claimed, b, e))
    for (auto [ib, ie] : ivs) {
      const int64_t lo = std::max(ib, pb), hi = std::min(ie, pe);
      if (lo < hi) out.emplace_back(lo, hi);
    }
  return out;
}

// An op the step's code calls: a namespaced operator (aten::conv2d, torchvision::nms, the
// autograd engine's "autograd::engine::evaluate_function: ..."), not a record_function range
// that older traces record as a cpu_op too (ProfilerStep#7, "## forward ##",
// DistributedDataParallel.forward), which holds many ops.
bool is_operator(const RuleIndex& ix, EventId e) {
  return ix.t.category[e] == Category::CpuOp && ix.t.name_of(e).find("::") != std::string_view::npos;
}

// The outermost operator above `op` on its thread (aten::conv2d above cudnn_convolution; the
// engine's evaluate_function above the backward node's range above its aten op).
EventId outermost_operator(const RuleIndex& ix, EventId op) {
  for (EventId p = ix.tree.parent(op); p != kNoEvent && ix.t.category[p] == Category::CpuOp; p = ix.tree.parent(p))
    if (is_operator(ix, p)) op = p;
  return op;
}

}  // namespace

IdleParts idle_parts(const RuleIndex& ix, Interval gap, int64_t b, int64_t e) {
  const Trace& t = ix.t;
  IdleParts parts;
  if (e <= b) return parts;
  // Work on the device's queue: the first launch call (to the judged device) that returns inside
  // the gap, looked for over the whole gap (a part of it may begin after that launch), or before
  // it: the work that ends the gap may have been launched long before it began, the host running
  // ahead of the GPU (hta_torchrec_a100_rank0's launches run 162 ms ahead: each ~85 ms of GPU
  // idle inside its input dist's 146 ms blocking copies ends with work launched before the copy
  // began, so the host's wait held none of it). From then on the GPU had work and did not start
  // it; an idle queue starts a kernel within the idle-queue latency (plus slack) of its launch, so
  // only a longer wait counts.
  int64_t host_end = e;
  int64_t first_return = INT64_MAX;  // of those launches, over the whole gap
  {
    const auto queued_from = [&](size_t k) {  // k: a position in ix.gpu
      const EventId g = ix.gpu[k];
      const EventId l = ix.tree.launcher(g);
      if (!ix.on_primary(g) || l == kNoEvent || t.ts[g] < e) return;  // its kernel ran before the gap
      host_end = std::min(host_end, std::max(b, t.end(l)));
      first_return = std::min(first_return, t.end(l));
    };
    auto [lo, hi] = ix.launch_range(std::min(b, gap.first) - ix.launch_latency - kEmptyQueueSlack, e);
    for (size_t k = lo; k < hi; ++k) queued_from(ix.launch_gpu[k]);
    for (auto [k, kend] = ix.gpu_range(gap.second, gap.second + 1); k < kend; ++k) queued_from(k);
    if (e - host_end > ix.launch_latency + kEmptyQueueSlack) {
      parts.queued = e - host_end;
      // The whole wait, the gap's idle from the first return (or the gap's start) to the GPU's
      // start, though [b, e) may hold only a part of it (a window's edge, another pattern's piece).
      parts.queued_waits.emplace_back(gap.second, gap.second - std::max(gap.first, first_return));
    } else {
      host_end = e;
    }
  }
  // The threads whose work can keep the GPU waiting: the one that launches most, the training
  // loop's when that is another, and the autograd engine's (the backward pass).
  const auto ours = [&](EventId ev) {
    return t.track[ev] == ix.main_thread || t.track[ev] == ix.step_thread;
  };
  std::vector<Interval> loading, runtime, dispatch, slow, optimizer, quiet, frames;
  // The driver's module loads are recorded on a track of their own; the launching thread waits
  // in the runtime call that triggered them.
  ix.module_loads.each_overlapping(t, b, host_end, [&](EventId m) { loading.emplace_back(t.ts[m], t.end(m)); });
  for (const SpanList* l : {&ix.syncs, &ix.allocs})
    l->each_overlapping(t, b, host_end, [&](EventId c) {
      if (ours(c)) runtime.emplace_back(t.ts[c], t.end(c));
    });
  std::vector<EventId> dispatch_ops, slow_ops, seen;
  const auto judge_op = [&](EventId op) {
    if (!is_operator(ix, op)) return;  // a range of ops, judged by the ops in it
    op = outermost_operator(ix, op);
    if (std::find(seen.begin(), seen.end(), op) != seen.end()) return;
    seen.push_back(op);
    // A wait on a collective is communication's; an op inside an optimizer step or zero_grad
    // that launches is counted apart (optimizer_single_tensor and grad_not_set_to_none judge
    // the idle there), not as the eager dispatch launch_bound takes.
    if (ix.has(op, kCommWait)) return;
    const bool in_optimizer = [&] {
      for (EventId p = op; p != kNoEvent; p = ix.tree.parent(p))
        if (ix.has(p, kOptimizerStep | kZeroGrad)) return true;
      return false;
    }();
    if (const size_t launches = launches_in(ix, op); launches > 0) {
      // Eager dispatch is ops one after another, each a few tens of microseconds of host work
      // per launch; an op that holds a long gap's worth of host time per launch (hta_alexnet's
      // aten::conv2d calls of 26 ms and more) is one slow op.
      const bool long_op = t.dur[op] >= kLongGap * static_cast<int64_t>(launches);
      if (long_op) {
        slow.emplace_back(t.ts[op], t.end(op));
        slow_ops.push_back(op);
      } else if (in_optimizer) {
        optimizer.emplace_back(t.ts[op], t.end(op));
      } else {
        dispatch.emplace_back(t.ts[op], t.end(op));
        dispatch_ops.push_back(op);
      }
    } else {
      quiet.emplace_back(t.ts[op], t.end(op));
    }
  };
  ix.cpu_ops.each_overlapping(t, b, host_end, [&](EventId op) {
    if (ours(op)) judge_op(op);
  });
  ix.autograd_top.each_overlapping(t, b, host_end, [&](EventId op) { judge_op(op); });
  for (const SpanList* l : {&ix.main_top, &ix.step_top})
    l->each_overlapping(t, b, host_end, [&](EventId ev) { frames.emplace_back(t.ts[ev], t.end(ev)); });
  std::vector<Interval> claimed;
  const auto take = [&](std::vector<Interval> ivs, int64_t& into, std::vector<Interval>* where) {
    ivs = merge_intervals(std::move(ivs));
    std::vector<Interval> got = newly_covered(ivs, claimed, b, host_end);
    into += idle_of(got);
    if (where) *where = got;
    claimed.insert(claimed.end(), got.begin(), got.end());
    claimed = merge_intervals(std::move(claimed));
  };
  take(std::move(loading), parts.loading, nullptr);
  take(std::move(runtime), parts.runtime, nullptr);
  std::vector<Interval> slow_spans;
  take(std::move(slow), parts.long_ops, &slow_spans);
  take(std::move(dispatch), parts.dispatch, &parts.dispatch_spans);
  take(std::move(optimizer), parts.optimizer, nullptr);
  take(std::move(quiet), parts.quiet, nullptr);
  {
    std::vector<Interval> gil, pin;
    for (size_t i = 0; i < ix.gil_waits.size() && ix.gil_waits[i].first < host_end; ++i)  // a few per trace
      if (ix.gil_waits[i].second > b) {
        gil.push_back(ix.gil_waits[i]);
        if (ix.gil_wait_pin_memory[i]) pin.push_back(ix.gil_waits[i]);
      }
    parts.gil_pin_memory = idle_of(newly_covered(merge_intervals(std::move(pin)), claimed, b, host_end));
    take(std::move(gil), parts.gil, nullptr);
  }
  take(std::move(frames), parts.frames, nullptr);
  parts.unprofiled = (host_end - b) - idle_of(claimed);
  // The ops named in the evidence: those whose dispatch time the gap holds.
  for (EventId op : dispatch_ops)
    if (covered(parts.dispatch_spans, t.ts[op], t.end(op)) > 0) parts.dispatch_ops.push_back(op);
  for (EventId op : slow_ops)
    if (covered(slow_spans, t.ts[op], t.end(op)) > 0) parts.long_op_events.push_back(op);
  return parts;
}

const IdleParts& idle_parts_of(const RuleIndex& ix, Interval gap, int64_t b, int64_t e, DetectorOutput& out) {
  std::unique_ptr<IdleParts>& seen = out.idle_parts_seen[{gap.first, gap.second, b, e}];
  if (!seen) seen = std::make_unique<IdleParts>(idle_parts(ix, gap, b, e));
  return *seen;
}

void IdleParts::add(const IdleParts& o) {
  queued += o.queued;
  for (const auto& w : o.queued_waits)  // one per gap, whatever pieces of it were judged
    if (std::find(queued_waits.begin(), queued_waits.end(), w) == queued_waits.end()) queued_waits.push_back(w);
  loading += o.loading;
  runtime += o.runtime;
  dispatch += o.dispatch;
  dispatch_spans.insert(dispatch_spans.end(), o.dispatch_spans.begin(), o.dispatch_spans.end());
  for (EventId op : o.dispatch_ops)
    if (std::find(dispatch_ops.begin(), dispatch_ops.end(), op) == dispatch_ops.end()) dispatch_ops.push_back(op);
  long_ops += o.long_ops;
  for (EventId op : o.long_op_events)
    if (std::find(long_op_events.begin(), long_op_events.end(), op) == long_op_events.end()) long_op_events.push_back(op);
  optimizer += o.optimizer;
  quiet += o.quiet;
  gil += o.gil;
  gil_pin_memory += o.gil_pin_memory;
  frames += o.frames;
  unprofiled += o.unprofiled;
}

std::string ops_tally_text(const RuleIndex& ix, const std::vector<EventId>& ops) {
  std::map<std::string, size_t> by_name;
  for (EventId op : ops) ++by_name[std::string(ix.t.name_of(op))];
  std::vector<std::pair<size_t, std::string>> by;
  for (auto& [n, c] : by_name) by.emplace_back(c, n);
  std::stable_sort(by.begin(), by.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> names;
  for (size_t i = 0; i < by.size() && i < 3; ++i)
    names.push_back(by[i].first == 1 ? by[i].second : fmt::format("{} x{}", by[i].second, by[i].first));
  if (by.size() > 3) names.push_back("...");
  return fmt::format("{}: {}", count_text(ops.size(), "op"), fmt::join(names, ", "));
}

namespace {
// What the trace shows of queued work the GPU did not start: how long it waited against how fast
// an idle GPU starts a launch in this trace, and that nothing the trace records held it (the whole
// device idle: no stream of the trace ran a kernel, a copy or a memset it could wait on). Over the
// GPU zoo's dev recordings (`scripts/dataset/make_gpu_zoo.py`, several jobs at a time on one GPU)
// such waits last 166-304 us (10th-90th percentile of 2,198 gaps) where an idle GPU starts a
// launch within 5-25 us; the kernels of two runs recorded at the same time never overlap, and the
// other run's kernels lie inside these waits: the GPU time-slices between the jobs' processes. On
// sampled traces (hta_sampled_rank0/1) the work the trace lacks may be records the profiler dropped, on
// SGLang's (tracelens_sglang_qwen3_8b_prefilldecode) CUDA graph replays it does not record.
std::string queued_text(const RuleIndex& ix, const IdleParts& p) {
  std::vector<int64_t> w;
  for (auto [gap_end, wait] : p.queued_waits) w.push_back(wait);
  std::string waits;
  if (!w.empty()) {
    const auto mid = w.begin() + static_cast<std::ptrdiff_t>(w.size() / 2);
    std::nth_element(w.begin(), mid, w.end());
    waits = fmt::format(" ({}, {}{} of GPU idle with the work queued, where an idle GPU starts a launch {} after its call "
                        "in this trace)",
                        count_text(w.size(), "wait"), w.size() == 1 ? "" : "median ", dur_text(*mid),
                        dur_text(ix.launch_latency));
  }
  // No "; " inside: the host line joins its parts with it.
  return fmt::format("with work already launched and queued that the GPU had not started{}, no GPU work of this trace "
                     "running on the device meanwhile: nothing it records there held that work, the GPU ran work it does not record (another "
                     "process's on the same GPU, or its own that the profiler did not record)",
                     waits);
}
}  // namespace

namespace {
// Who held the GIL in the waits of RuleIndex::gil_waits that `p` holds.
std::string gil_holder(const IdleParts& p) {
  return 2 * p.gil_pin_memory > p.gil ? "the DataLoader's pin-memory thread" : "another thread of the process";
}
}  // namespace

std::string idle_parts_text(const RuleIndex& ix, const IdleParts& p) {
  std::vector<std::pair<int64_t, std::string>> parts;
  if (p.unprofiled > 0) parts.emplace_back(p.unprofiled, "with nothing recorded on the host (code the profiler does not record)");
  if (p.dispatch > 0)
    parts.emplace_back(p.dispatch, fmt::format("dispatching ops that launch GPU work ({})", ops_tally_text(ix, p.dispatch_ops)));
  if (p.long_ops > 0)
    parts.emplace_back(p.long_ops, fmt::format("in slow ops, at least {} of host time per launch ({})", dur_text(kLongGap),
                                                ops_tally_text(ix, p.long_op_events)));
  if (p.optimizer > 0) parts.emplace_back(p.optimizer, "in the optimizer step's or zero_grad's ops that launch GPU work");
  if (p.queued > 0) parts.emplace_back(p.queued, queued_text(ix, p));
  if (p.loading > 0)
    parts.emplace_back(p.loading, "in lazy CUDA module loading on a kernel's first call (the trace's \"Runtime Triggered "
                                  "Module Loading\" and \"Lazy Function Loading\" records)");
  if (p.quiet > 0) parts.emplace_back(p.quiet, "in ops that launch nothing");
  if (p.gil > 0)
    parts.emplace_back(p.gil, fmt::format("in calls into torch after their ops returned, while {} ran Python: waiting "
                                          "for the GIL",
                                          gil_holder(p)));
  if (p.frames > 0) parts.emplace_back(p.frames, "in profiled frames with no op under them");
  if (p.runtime > 0) parts.emplace_back(p.runtime, "in synchronizing or allocator calls");
  std::stable_sort(parts.begin(), parts.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> words;
  for (auto& [ns, what] : parts) words.push_back(fmt::format("{} {}", dur_text(ns), what));
  return fmt::format("the host in those gaps: {}", fmt::join(words, "; "));
}

namespace {

// What the trace shows of why ops of one name held the host for long per launch.
struct SlowOp {
  std::string name;
  size_t calls = 0, launches = 0;
  int64_t host = 0;         // their host time
  int64_t blocked = 0;      // in synchronizing and copy calls inside them
  int64_t longest_quiet = 0;  // the longest stretch inside one with no launch from its thread
  std::map<std::string, int64_t> blocking_calls;  // by name
};

// Slow ops by name, the most host time first.
std::vector<SlowOp> slow_ops_by_name(const RuleIndex& ix, const std::vector<EventId>& ops) {
  const Trace& t = ix.t;
  std::map<std::string, SlowOp> by_name;
  for (EventId op : ops) {
    SlowOp& s = by_name[std::string(t.name_of(op))];
    s.name = t.name_of(op);
    ++s.calls;
    s.host += t.dur[op];
    for (const SpanList* l : {&ix.syncs, &ix.memcpy_calls})
      l->each_overlapping(t, t.ts[op], t.end(op), [&](EventId c) {
        if (t.track[c] != t.track[op] || t.ts[c] < t.ts[op] || t.end(c) > t.end(op)) return;
        s.blocked += t.dur[c];
        s.blocking_calls[std::string(t.name_of(c))] += t.dur[c];
      });
    int64_t last = t.ts[op];
    auto [lo, hi] = ix.launch_range(t.ts[op], t.end(op));
    for (size_t k = lo; k < hi; ++k) {
      if (t.track[ix.tree.launcher(ix.gpu[ix.launch_gpu[k]])] != t.track[op]) continue;
      ++s.launches;
      s.longest_quiet = std::max(s.longest_quiet, ix.launch_ts[k] - last);
      last = ix.launch_ts[k];
    }
    s.longest_quiet = std::max(s.longest_quiet, t.end(op) - last);
  }
  std::vector<SlowOp> v;
  for (auto& [name, s] : by_name) v.push_back(std::move(s));
  std::stable_sort(v.begin(), v.end(), [](const SlowOp& a, const SlowOp& b) { return a.host > b.host; });
  return v;
}

// The cause each of the costliest slow ops can have, from what the trace shows of it: a copy or
// sync call inside it holding the host (a blocking copy), a convolution (cuDNN autotunes its first
// call under torch.backends.cudnn.benchmark=True), else host work between its launches
// (hta_sampled_rank0's aten::_foreach_mul_ holds the host 124 ms around 6 launches of 31 us: no
// autotuning, no copy, in an op that has neither).
std::string slow_ops_fix(const RuleIndex& ix, const std::vector<EventId>& ops) {
  constexpr size_t kNamed = 2;
  const std::vector<SlowOp> by_name = slow_ops_by_name(ix, ops);
  std::vector<std::string> copies, convolutions, host_work;
  for (size_t i = 0; i < by_name.size() && i < kNamed; ++i) {
    const SlowOp& s = by_name[i];
    const std::string held = fmt::format("{} ({}, {} of host time, {}", s.name, count_text(s.calls, "call"),
                                         dur_text(s.host), count_text(s.launches, "launch", "launches"));
    if (s.blocked >= kLongGap)
      copies.push_back(fmt::format("{}, {} in {})", held, dur_text(s.blocked), top_key(s.blocking_calls)));
    else if (is_convolution_op(s.name))
      convolutions.push_back(held + ")");
    else
      host_work.push_back(fmt::format("{}, up to {} without one)", held, dur_text(s.longest_quiet)));
  }
  std::vector<std::string> causes;
  if (!copies.empty())
    causes.push_back(fmt::format("{} {} in copy or sync calls inside {}: a blocking copy; copy with "
                                 "non_blocking=True from pinned memory, or keep the data on the device",
                                 fmt::join(copies, " and "), copies.size() == 1 ? "waits" : "wait",
                                 copies.size() == 1 ? "it" : "them"));
  if (!convolutions.empty())
    causes.push_back(fmt::format("{} {}: {} first calls initialize cuDNN and, under "
                                 "torch.backends.cudnn.benchmark=True, autotune; profile past the first steps to see "
                                 "whether it repeats",
                                 fmt::join(convolutions, " and "),
                                 convolutions.size() == 1 ? "is a convolution" : "are convolutions",
                                 convolutions.size() == 1 ? "its" : "their"));
  if (!host_work.empty())
    causes.push_back(fmt::format("{} {} nothing for long: host work inside {} between launches (CPU-side tensors, "
                                 "hooks), not GPU work",
                                 fmt::join(host_work, " and "), host_work.size() == 1 ? "launches" : "launch",
                                 host_work.size() == 1 ? "the op" : "the ops"));
  if (by_name.size() > kNamed) causes.push_back(fmt::format("{} more", count_text(by_name.size() - kNamed, "op")));
  return fmt::format("most of this idle the host spends inside slow ops, each holding the host for hundreds of "
                     "microseconds or more per launch: {}; look inside {} with ttap tree",
                     fmt::join(causes, "; "), by_name.size() == 1 ? "it" : "them");
}

}  // namespace

std::string idle_parts_fix(const RuleIndex& ix, const IdleParts& p, int64_t idle) {
  const auto most = [&](int64_t part) { return 2 * part > idle; };
  if (most(p.queued))
    return "most of this idle the GPU had this process's work queued and started none of it while no GPU work of the "
           "trace ran, so the host is not what held it: either other processes sharing the GPU took their turns on it "
           "(it time-slices between them; nvidia-smi lists them: give the job a GPU or a MIG instance of its own, or "
           "profile it alone to see its own cost), or the GPU ran work the profiler did not record";
  if (most(p.loading))
    return "most of this idle the host waits while the driver loads kernels' modules on their first call (lazy loading, "
           "CUDA_MODULE_LOADING=LAZY, the default): a one-time cost per kernel; profile after warm-up steps that run "
           "every kernel once, or set CUDA_MODULE_LOADING=EAGER to load the modules at startup";
  if (most(p.runtime))
    return "most of this idle the host spends inside synchronizing or allocator calls (ttap tree around the gaps names "
           "them): a blocking copy (.item(), .cpu(), .tolist(), a copy to or from pageable memory), "
           "torch.cuda.synchronize(), or cudaMalloc as the caching allocator grows; take them off the step path "
           "(non_blocking=True copies into pinned memory, read results a step later, fewer syncs)";
  if (most(p.long_ops)) return slow_ops_fix(ix, p.long_op_events);
  if (most(p.gil))
    return fmt::format("most of this idle the loop's thread waits for the GIL in calls into torch whose ops had "
                       "returned, while {} runs Python: profile without with_stack=True (the Python tracer slows that "
                       "thread too) to see its real cost; where it stays, give that thread less Python work per step{}",
                       gil_holder(p),
                       2 * p.gil_pin_memory > p.gil ? " (fewer, larger batches to take in)" : "");
  if (most(p.frames))
    return "most of this idle the host runs Python with no op under it (ttap tree around the gaps names the frames): "
           "per-step Python work (metrics, logging, data handling, a loop over parameters) while the GPU has nothing "
           "queued; move it off the step path, batch it, or do it while the GPU still has work queued";
  if (most(p.dispatch))
    return "most of this idle the host spends dispatching ops one by one (eager mode's per-op Python, dispatcher and "
           "allocation work): capture the step in a CUDA graph (torch.compile(mode=\"reduce-overhead\") or "
           "torch.cuda.CUDAGraph) or torch.compile it to fuse ops";
  if (most(p.quiet))
    return "most of this idle the host spends in ops that launch nothing (CPU tensors, tensor setup; the host line): "
           "move that CPU work off the step path (into DataLoader workers) or onto the GPU";
  if (most(p.optimizer))
    return "most of this idle the host spends in the optimizer step's or zero_grad's per-parameter ops: use the "
           "multi-tensor optimizer (foreach=True, or fused=True for torch.optim.Adam/AdamW) and "
           "zero_grad(set_to_none=True)";
  return "";
}

}  // namespace ttap::rules
