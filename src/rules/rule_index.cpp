// RuleIndex: the per-trace precomputation every rule detector shares (see rule_index.hpp).
#include "rule_index.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <map>
#include <tuple>

namespace ttap::rules {

namespace {

bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Kernel-name fragments of tensor-core math: cuDNN/cuBLAS Volta-Turing (h884, h1688,
// s1688 for TF32-free fp16 accumulate, i8816), Ampere/Hopper (16816, xmma, gmma, wgmma,
// tensorop in CUTLASS names), and the dtype words the newer libraries write (bf16, tf32,
// f16). A name with none of these does its math on the CUDA cores.
bool tensor_core_kernel(std::string_view n) {
  // cuDNN/cuBLAS name the math unit: "..._f32f32_f32f32_f32_..._ffma_..." is an xmma
  // template instantiated for CUDA cores (fused multiply-add), what they pick with TF32 off.
  if (contains(n, "_ffma")) return false;
  for (std::string_view p : {"h884", "h1688", "s884", "s1688", "i8816", "884gemm", "1688gemm", "16816", "hmma", "HMMA",
                             "xmma", "gmma", "tensorop", "TensorOp", "bf16", "BF16", "tf32", "TF32", "f16", "fp16",
                             "FP16", "half", "Half", "__nv_bfloat16", "bfloat16", "e4m3", "e5m2", "mfma", "MFMA"})
    if (contains(n, p)) return true;
  return false;
}

uint32_t flags_of(std::string_view n) {
  uint32_t f = 0;
  const bool runtime = starts_with(n, "cuda") || starts_with(n, "hip");
  if (runtime) {
    if (n == "cudaStreamSynchronize" || n == "cudaDeviceSynchronize" || n == "cudaEventSynchronize" ||
        n == "hipStreamSynchronize" || n == "hipDeviceSynchronize" || n == "hipEventSynchronize")
      f |= kSyncCall;
    if (starts_with(n, "cudaMemcpy") || starts_with(n, "hipMemcpy")) {
      f |= kMemcpyCall;
      if (!contains(n, "Async") && !contains(n, "WithStream") && !contains(n, "ToSymbol")) f |= kBlockingMemcpy;
    }
    if (n == "cudaMalloc" || n == "cudaFree" || n == "hipMalloc" || n == "hipFree") f |= kAllocCall;
    if (contains(n, "StreamBeginCapture") || contains(n, "StreamEndCapture") || contains(n, "GraphInstantiate"))
      f |= kGraphCapture;
  }
  // torch.cuda.CUDAGraph's capture_begin / capture_end (their Python frames and bindings).
  if (contains(n, "capture_begin") || contains(n, "capture_end")) f |= kGraphCapture;
  // The torch.cuda.graph context manager around them: its __enter__ synchronizes, collects
  // garbage and empties the allocator's cache before capture_begin, its __exit__ calls
  // capture_end. tracelens_sglang_decode_bs32's two hipFree calls (481 us, its only
  // allocator calls) are that empty_cache, one-time setup of the capture, not a growing cache.
  if (starts_with(n, "torch/cuda/graphs.py(") && (n.ends_with("): __enter__") || n.ends_with("): __exit__")))
    f |= kGraphCapture;
  // Inductor's CUDA graph trees recording a new graph (mode="reduce-overhead"): the tree
  // manager's record_function builds the node (recording inputs, warm-up) before the stream
  // capture and instantiates the graph after it. xDiT's warm-up spends 54-373 ms there, 35 ms
  // of it outside capture_begin..capture_end with the GPU idle.
  if (n.starts_with("CUDAGraphNode.record") ||
      (n.starts_with("torch/_inductor/cudagraph_trees.py(") && n.ends_with("): record_function")))
    f |= kGraphCapture;
  // Inductor's wrapper call of a compiled graph and Dynamo's guard check before it.
  if (starts_with(n, "## Call CompiledFxGraph") || n == "TorchDynamo Cache Lookup") f |= kCompiledCall;
  if (is_dataloader_event(n)) f |= kDataLoader;
  if (starts_with(n, "Optimizer.step#")) f |= kOptimizerStep;
  if (starts_with(n, "Optimizer.zero_grad#") || starts_with(n, "## zero_grad")) f |= kZeroGrad;
  // torch.compile regions; older releases mark only the AOTAutograd forward, CompiledFunction.
  if (starts_with(n, "Torch-Compiled Region") || n == "CompiledFunction") f |= kCompiledRegion;
  // Compilation, not the per-call guard check ("TorchDynamo Cache Lookup").
  if (contains(n, "torch/_dynamo/convert_frame.py") || contains(n, "compile_inner") ||
      starts_with(n, "_compile.compile_inner") || starts_with(n, "OutputGraph.call_user_compiler") ||
      starts_with(n, "compile_fx"))
    f |= kDynamoCompile;
  if (tensor_core_kernel(n)) f |= kTensorCoreKernel;
  if (contains(n, "nchwToNhwc") || contains(n, "nhwcToNchw") || contains(n, "nchw2nhwc") || contains(n, "nhwc2nchw"))
    f |= kLayoutKernel;
  if (is_communication_kernel(n)) f |= kCommKernel;
  if (n == "aten::to" || n == "aten::_to_copy") f |= kCastOp;
  if (n == "aten::contiguous" || n == "aten::clone") f |= kCloneOp;
  if (contains(n, "multi_tensor_apply") || contains(n, "MultiTensorApply") || contains(n, "fused_adam") ||
      contains(n, "FusedAdam") || contains(n, "fused_sgd") || contains(n, "_fused_"))
    f |= kMultiTensorKernel;
  if (n == "aten::item" || n == "aten::_local_scalar_dense" || n == "aten::nonzero" || n == "aten::is_nonzero" ||
      n == "aten::equal" || n == "aten::masked_select" || n == "aten::unique" || n == "aten::_unique2")
    f |= kSyncOp;
  if (contains(n, "empty_cache")) f |= kEmptyCache;
  if (contains(n, "run_backward")) f |= kBackwardCall;
  if (starts_with(n, "autograd::engine::evaluate_function")) f |= kAutogradOp;
  // The profiler's bookkeeping: record_function's __enter__ / __exit__, profile.step().
  if (starts_with(n, "torch/autograd/profiler.py(") || starts_with(n, "torch/profiler/profiler.py(")) f |= kProfilerFrame;
  if (n == "aten::wait" || n == "c10d::wait" || contains(n, "wait_tensor") || contains(n, "Work.wait")) f |= kCommWait;
  return f;
}

// A first step at least this much longer than the later steps' median is warm-up (kineto's
// nw4 run, whose DataLoader workers start in it: 181.6 ms against 126 ms, 1.44x).
constexpr double kWarmupStepRatio = 1.25;
constexpr double kEmptyStepShare = 0.01;

// RuleIndex::gil_waits and whether each lies under the pin-memory thread's Python: the stays of
// the loop's threads (`loop`) in "<built-in ...>" calls past their ops' end while another
// thread's Python starts.
std::pair<std::vector<Interval>, std::vector<uint8_t>> find_gil_waits(const Trace& t, const EventTree& tree,
                                                                      const std::function<bool(TrackId)>& loop) {
  std::vector<std::pair<int64_t, EventId>> others;  // Python calls on the process's other threads, by start
  for (EventId e = 0; e < t.size(); ++e)
    if (t.category[e] == Category::PythonFunction && !loop(t.track[e])) others.emplace_back(t.ts[e], e);
  if (others.empty()) return {};
  std::sort(others.begin(), others.end());
  const auto in_pin_memory = [&](EventId e) {
    for (; e != kNoEvent; e = tree.parent(e))
      if (t.name_of(e).find("pin_memory.py") != std::string_view::npos) return true;
    return false;
  };
  std::vector<std::pair<Interval, bool>> found;
  for (EventId f = 0; f < t.size(); ++f) {
    if (t.category[f] != Category::PythonFunction || !loop(t.track[f]) || !t.name_of(f).starts_with("<built-in ")) continue;
    // Its ops: namespaced operators (aten::conv2d), not a record_function range such as the
    // DataLoader's "enumerate(DataLoader)#..." under next(), whose wait is the loader's.
    int64_t ops_end = INT64_MIN;
    for (EventId ch : tree.children(f))
      if (t.category[ch] == Category::CpuOp && t.name_of(ch).find("::") != std::string_view::npos)
        ops_end = std::max(ops_end, t.end(ch));
    if (ops_end == INT64_MIN || t.end(f) - ops_end < kMinGilWait) continue;
    // Another thread's Python starting in there ran while this one waited.
    const auto it = std::upper_bound(others.begin(), others.end(), std::pair<int64_t, EventId>{ops_end, kNoEvent});
    if (it == others.end() || it->first >= t.end(f)) continue;
    found.push_back({{ops_end, t.end(f)}, in_pin_memory(it->second)});
  }
  std::sort(found.begin(), found.end());
  std::pair<std::vector<Interval>, std::vector<uint8_t>> out;
  for (auto& [iv, pin] : found) out.first.push_back(iv), out.second.push_back(pin);
  return out;
}

}  // namespace

void SpanList::sort(const Trace& t) {
  std::vector<size_t> order(events.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return starts[a] != starts[b] ? starts[a] < starts[b] : events[a] < events[b];
  });
  std::vector<EventId> ev(events.size());
  std::vector<int64_t> st(events.size());
  for (size_t i = 0; i < order.size(); ++i) {
    ev[i] = events[order[i]];
    st[i] = t.ts[ev[i]];
  }
  events = std::move(ev);
  starts = std::move(st);
}

RuleIndex::RuleIndex(const Trace& trace, const EventTree& tr) : t(trace), tree(tr) {
  name_flags.resize(t.strings.size());
  for (StringId s = 0; s < t.strings.size(); ++s) name_flags[s] = flags_of(t.strings.view(s));

  // ---- CPU spans ----
  std::vector<int64_t> launches_per_track(t.tracks.size(), 0);
  std::vector<EventId> capture_calls;  // stream Begin/EndCapture calls
  for (EventId e = 0; e < t.size(); ++e) {
    const Category c = t.category[e];
    if (c == Category::Overhead && t.dur[e] > 0 &&
        (contains(t.name_of(e), "Module Loading") || contains(t.name_of(e), "Function Loading")))
      module_loads.add(e, t.ts[e], t.dur[e]);
    if (!is_cpu_side(c)) continue;
    const uint32_t f = name_flags[t.name[e]];
    const int64_t ts = t.ts[e], dur = t.dur[e];
    if (is_launch(c) && (f & kGraphCapture) && contains(t.name_of(e), "Capture")) capture_calls.push_back(e);
    if ((f & kGraphCapture) && dur > 0) capture_work.emplace_back(ts, ts + dur);
    if (c == Category::CpuOp) cpu_ops.add(e, ts, dur);
    if (f & kDataLoader) dataloader.add(e, ts, dur);
    if (f & kOptimizerStep) optimizer.add(e, ts, dur);
    if (f & kZeroGrad) zero_grad.add(e, ts, dur);
    if (f & kCompiledRegion) compiled.add(e, ts, dur);
    if (f & kDynamoCompile) dynamo.add(e, ts, dur);
    if (f & kEmptyCache) empty_cache.add(e, ts, dur);
    if (is_launch(c)) {
      if (f & (kSyncCall | kBlockingMemcpy)) syncs.add(e, ts, dur);
      if (f & kAllocCall) allocs.add(e, ts, dur);
      if (f & kMemcpyCall) memcpy_calls.add(e, ts, dur);
    }
  }

  // Each thread's Begin-Capture pairs with its next End-Capture.
  std::sort(capture_calls.begin(), capture_calls.end(),
            [&](EventId a, EventId b) { return t.ts[a] != t.ts[b] ? t.ts[a] < t.ts[b] : a < b; });
  std::map<TrackId, int64_t> capture_open;  // per thread: the start of a capture not yet ended
  for (EventId e : capture_calls) {
    if (contains(t.name_of(e), "BeginCapture")) {
      capture_open.emplace(t.track[e], t.ts[e]);
    } else if (auto it = capture_open.find(t.track[e]); it != capture_open.end()) {
      captures.emplace_back(it->second, t.end(e));
      capture_open.erase(it);
    }
  }
  captures = merge_intervals(std::move(captures));
  capture_work.insert(capture_work.end(), captures.begin(), captures.end());
  capture_work = merge_intervals(std::move(capture_work));

  // ---- GPU side ----
  gpu = tree.gpu_events();
  gpu_start.reserve(gpu.size());
  for (EventId g : gpu) gpu_start.push_back(t.ts[g]), gpu_max_dur = std::max(gpu_max_dur, t.dur[g]);
  NameClassifier classify(t);
  gpu_cat.reserve(gpu.size());
  for (EventId g : gpu) gpu_cat.push_back(classify.gpu_category(tree, g));

  std::map<int32_t, int64_t> time_per_device;
  for (EventId g : gpu) time_per_device[t.track_of(g).device] += t.dur[g];
  int64_t best = -1;
  for (auto [d, ns] : time_per_device)
    if (ns > best) best = ns, device = d;

  std::map<int64_t, int64_t> compute_per_stream;
  std::vector<Interval> b, c, m;
  for (size_t i = 0; i < gpu.size(); ++i) {
    const EventId g = gpu[i];
    const Track& tk = t.track_of(g);
    if (tk.device != device) continue;
    b.emplace_back(t.ts[g], t.end(g));
    if (t.category[g] == Category::GpuMemcpy) continue;
    if (has(g, kCommKernel)) {
      m.emplace_back(t.ts[g], t.end(g));
    } else {
      c.emplace_back(t.ts[g], t.end(g));
      if (t.category[g] == Category::Kernel) compute_per_stream[tk.stream] += t.dur[g];
    }
  }
  busy = merge_intervals(std::move(b));
  compute = merge_intervals(std::move(c));
  comm = merge_intervals(std::move(m));
  if (!busy.empty()) gpu_first = busy.front().first, gpu_last = busy.back().second;
  step_first = gpu_first, step_last = gpu_last;
  if (!busy.empty() && !tree.steps().empty()) {
    step_first = std::min(gpu_first, tree.steps().front().ts);
    step_last = std::max(gpu_last, tree.steps().back().end);
  }
  best = -1;
  for (auto [s, ns] : compute_per_stream)
    if (ns > best) best = ns, compute_stream = s;
  std::vector<Interval> cs;
  for (EventId g : gpu) {
    const Track& tk = t.track_of(g);
    if (tk.device == device && tk.stream == compute_stream && t.category[g] == Category::Kernel && !has(g, kCommKernel))
      cs.emplace_back(t.ts[g], t.end(g));
  }
  compute_stream_busy = merge_intervals(std::move(cs));
  std::vector<Interval> side;
  for (EventId g : gpu) {
    const Track& tk = t.track_of(g);
    if (tk.device == device && tk.stream != compute_stream && has(g, kCommKernel) && t.category[g] != Category::GpuMemcpy)
      side.emplace_back(t.ts[g], t.end(g));
  }
  comm_side = merge_intervals(std::move(side));

  if (const DeviceProperties* p = t.device(device)) {
    num_sms = p->num_sms;
    compute_major = p->compute_major;
    amd = contains(p->name, "AMD") || contains(p->name, "Instinct") || contains(p->name, "Radeon");
  }

  // ---- launches ----
  std::vector<std::pair<int64_t, uint32_t>> ls;
  std::vector<int64_t> delays;
  for (size_t i = 0; i < gpu.size(); ++i) {
    const EventId l = tree.launcher(gpu[i]);
    if (l == kNoEvent) continue;
    ls.emplace_back(t.ts[l], static_cast<uint32_t>(i));
    delays.push_back(t.ts[gpu[i]] - t.ts[l]);
    ++launches_per_track[t.track[l]];
  }
  std::sort(ls.begin(), ls.end());
  for (auto [ts, i] : ls) launch_ts.push_back(ts), launch_gpu.push_back(i);
  // Capped: with a queue that never ran empty (14 ms deep on a DDP CNN whose launches run
  // 77 ms ahead) every kernel would look freshly launched.
  launch_latency = idle_queue_launch_latency(delays);

  // ---- main thread and its top-level events ----
  int64_t most = 0;
  for (TrackId tk = 0; tk < launches_per_track.size(); ++tk)
    if (launches_per_track[tk] > most) most = launches_per_track[tk], main_thread = tk;
  if (main_thread == UINT32_MAX) {  // CPU-only trace: the thread with the most CPU time
    std::vector<int64_t> cpu_time(t.tracks.size(), 0);
    for (size_t tk = 0; tk < tree.roots_by_track().size(); ++tk)
      for (EventId r : tree.roots_by_track()[tk]) cpu_time[tk] += t.dur[r];
    for (TrackId tk = 0; tk < cpu_time.size(); ++tk)
      if (cpu_time[tk] > most) most = cpu_time[tk], main_thread = tk;
  }
  if (main_thread != UINT32_MAX && main_thread < tree.roots_by_track().size()) {
    for (EventId r : tree.roots_by_track()[main_thread]) {
      if (profiler_step_number(t.name_of(r)) >= 0) {
        for (EventId ch : tree.children(r)) main_top.add(ch, t.ts[ch], t.dur[ch]);
      } else if (t.dur[r] > 0) {
        main_top.add(r, t.ts[r], t.dur[r]);
      }
    }
  }

  for (EventId g : gpu) {
    const std::string_view n = t.name_of(g);
    const CopyArgs* ca = t.copy(g);
    if (t.category[g] == Category::GpuMemcpy && t.track_of(g).device == device && ca != nullptr &&
        ca->bytes >= (64 << 10) && (n.find("HtoD") != std::string_view::npos || n.find("DtoH") != std::string_view::npos))
      bulk_copies.add(g, t.ts[g], t.dur[g]);
  }
  // A cudaMemcpyAsync to pageable host memory returns only when the copy is done, so it
  // waits for everything queued before it: a sync on the queue like cudaStreamSynchronize
  // (a .cpu() or .item() of a small result), and host_sync judges it with them.
  for (size_t i = 0; i < gpu.size(); ++i) {
    const EventId g = gpu[i];
    if (t.category[g] != Category::GpuMemcpy) continue;
    const std::string_view n = t.name_of(g);
    if (n.find("DtoH") == std::string_view::npos || n.find("Pageable") == std::string_view::npos) continue;
    const EventId l = tree.launcher(g);
    if (l != kNoEvent && has(l, kMemcpyCall) && !has(l, kBlockingMemcpy)) syncs.add(l, t.ts[l], t.dur[l]);
  }
  if (!tree.steps().empty()) {
    const TrackId st = t.track[tree.steps().front().event];
    if (st != main_thread && st < tree.roots_by_track().size()) {
      step_thread = st;
      for (EventId r : tree.roots_by_track()[st])
        if (profiler_step_number(t.name_of(r)) >= 0)
          for (EventId ch : tree.children(r)) step_top.add(ch, t.ts[ch], t.dur[ch]);
    }
  }

  for (size_t tk = 0; tk < tree.roots_by_track().size(); ++tk) {
    if (tk == main_thread || tk == step_thread) continue;
    for (EventId r : tree.roots_by_track()[tk])
      if (has(r, kAutogradOp)) autograd_top.add(r, t.ts[r], t.dur[r]);
  }

  std::tie(gil_waits, gil_wait_pin_memory) =
      find_gil_waits(t, tree, [&](TrackId tk) { return tk == main_thread || tk == step_thread; });

  for (SpanList* l : {&bulk_copies, &main_top, &step_top, &autograd_top, &cpu_ops, &dataloader, &optimizer, &zero_grad, &compiled, &dynamo, &syncs, &allocs,
                      &memcpy_calls, &empty_cache, &module_loads})
    l->sort(t);

  // GPU work launched from inside an optimizer step or zero_grad (on the same thread):
  // its own detectors explain it, the generic kernel rules leave it alone.
  gpu_in_optimizer.assign(gpu.size(), 0);
  for (const SpanList* l : {&optimizer, &zero_grad})
    for (EventId s : l->events) {
      auto [lo, hi] = launch_range(t.ts[s], t.end(s));
      for (size_t k = lo; k < hi; ++k) {
        const uint32_t i = launch_gpu[k];
        if (t.track[tree.launcher(gpu[i])] == t.track[s]) gpu_in_optimizer[i] = 1;
      }
    }

  // Warm-up: the first step when there are steps (allocator and cuDNN autotuning fill it),
  // else the first fifth of the CPU activity, which is where one-time setup lands.
  const auto& steps = tree.steps();
  if (!steps.empty()) {
    std::vector<int64_t> d;
    for (const Step& s : steps) d.push_back(s.end - s.ts);
    if (d.size() >= 2) {
      std::vector<int64_t> later(d.begin() + 1, d.end());
      std::nth_element(later.begin(), later.begin() + static_cast<std::ptrdiff_t>(later.size() / 2), later.end());
      const double first = static_cast<double>(d.front()), rest = static_cast<double>(later[later.size() / 2]);
      // Later steps of almost no time are markers closed without work (HTA's MI250 toy ends
      // with a 0.0 ms step after a 9.3 ms one): then the first step is the steady state.
      first_step_warmup = first >= kWarmupStepRatio * rest && rest >= kEmptyStepShare * first;
    }
    std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
    median_step = d[d.size() / 2];
  } else if (!main_top.events.empty()) {
    const int64_t first = main_top.starts.front();
    int64_t last = first;
    for (EventId e : main_top.events) last = std::max(last, t.end(e));
    warmup_end = first + (last - first) / 5;
  }
}

std::pair<size_t, size_t> RuleIndex::gpu_range(int64_t b, int64_t e) const {
  const auto lo = std::lower_bound(gpu_start.begin(), gpu_start.end(), b);
  const auto hi = std::lower_bound(lo, gpu_start.end(), e);
  return {static_cast<size_t>(lo - gpu_start.begin()), static_cast<size_t>(hi - gpu_start.begin())};
}

std::vector<size_t> RuleIndex::gpu_overlapping(int64_t b, int64_t e) const {
  std::vector<size_t> v;
  for (auto [i, hi] = gpu_range(b - gpu_max_dur, e); i < hi; ++i)
    if (t.end(gpu[i]) > b || (t.dur[gpu[i]] == 0 && gpu_start[i] >= b)) v.push_back(i);
  return v;
}

std::pair<size_t, size_t> RuleIndex::launch_range(int64_t b, int64_t e) const {
  const auto lo = std::lower_bound(launch_ts.begin(), launch_ts.end(), b);
  const auto hi = std::lower_bound(lo, launch_ts.end(), e);
  return {static_cast<size_t>(lo - launch_ts.begin()), static_cast<size_t>(hi - launch_ts.begin())};
}

std::vector<Interval> RuleIndex::idle_gaps(int64_t b, int64_t e) const {
  if (busy.empty()) return {};
  return uncovered(busy, std::max(b, gpu_first), std::min(e, gpu_last));
}

std::vector<Interval> RuleIndex::idle_gaps_in_steps(int64_t b, int64_t e) const {
  if (busy.empty()) return {};
  return uncovered(busy, std::max(b, step_first), std::min(e, step_last));
}

std::vector<Interval> RuleIndex::whole_idle_gaps(int64_t b, int64_t e, bool in_steps) const {
  // Only where the GPU's record spans a good part of the steps: a trace whose kernels were
  // mostly not recorded (two kernels in a 34 ms SGLang decode step, graph replays) shows
  // no idle GPU, it shows nothing.
  in_steps = in_steps && gpu_record_spans_steps();
  const int64_t first = in_steps ? step_first : gpu_first, last = in_steps ? step_last : gpu_last;
  if (busy.empty() || e <= first || b >= last) return {};
  // From the start of the last busy interval beginning before b to the first one beginning
  // at or after e: every gap in between is whole.
  auto it = std::lower_bound(busy.begin(), busy.end(), b, [](const Interval& iv, int64_t x) { return iv.first < x; });
  const int64_t from = it == busy.begin() ? first : std::prev(it)->first;
  auto jt = std::lower_bound(it, busy.end(), e, [](const Interval& iv, int64_t x) { return iv.first < x; });
  const int64_t to = jt == busy.end() ? last : jt->first;
  std::vector<Interval> out;
  for (auto g : uncovered(busy, from, to))
    if (g.second > b && g.first < e) out.push_back(g);
  return out;
}

int64_t RuleIndex::drained_during(EventId call) const {
  const int64_t b = t.ts[call];
  int64_t returned = t.end(call) - launch_latency;
  // A copy call's own copy runs once the queue ahead of it is done: the queue ran dry
  // before it, and the copy itself is not queued work it waited for.
  for (EventId g : tree.children(call))
    if (is_gpu_activity(t.category[g])) returned = std::min(returned, t.ts[g]);
  // The last busy interval starting before the call returned; its end, when inside the
  // call, is when the queue ran dry.
  auto it = std::lower_bound(busy.begin(), busy.end(), returned, [](const Interval& iv, int64_t x) { return iv.first < x; });
  const int64_t last_end = it == busy.begin() ? b : std::prev(it)->second;
  return std::max(b, std::min(returned, last_end));
}

int64_t RuleIndex::resume_after(int64_t ts) const {
  auto [li, lend] = launch_range(ts, INT64_MAX);
  return li < lend ? launch_ts[li] + launch_latency : ts;
}

EventId RuleIndex::enclosing_op(EventId e) const {
  EventId p = is_gpu_activity(t.category[e]) ? tree.launcher(e) : tree.parent(e);
  while (p != kNoEvent && t.category[p] != Category::CpuOp) p = tree.parent(p);
  return p;
}

bool RuleIndex::in_graph_capture(EventId e) const {
  if (has(e, kGraphCapture)) return true;
  return 2 * covered(captures, t.ts[e], t.end(e)) > t.dur[e] && t.dur[e] > 0;
}

bool RuleIndex::all_capture_work(const std::vector<EventId>& events) const {
  return !events.empty() && std::all_of(events.begin(), events.end(), [&](EventId e) {
    return in_graph_capture(e) || 2 * covered(capture_work, t.ts[e], t.end(e)) > t.dur[e];
  });
}

bool RuleIndex::after_warmup(EventId e) const {
  // One recorded step is all there is (the profiler schedule skips warm-up): it counts.
  if (tree.steps().size() >= 2) return tree.step_of(e) >= 1;
  if (tree.steps().size() == 1) return true;
  return t.ts[e] >= warmup_end;
}

// ---- helpers ----

double ramp(double x, double lo, double hi) {
  if (hi <= lo) return x >= hi ? 1.0 : 0.0;
  return std::clamp((x - lo) / (hi - lo), 0.0, 1.0);
}

double confidence_between(double signal, double fire, double strong) { return 0.4 + 0.6 * ramp(signal, fire, strong); }

// The first inner list of a JSON list of lists, brackets included ("[16, 32, 80, 80]" of
// "[[16, 32, 80, 80], []]"): an op's first input's dims or strides; "" when not recorded.
std::string_view first_inner_list(std::string_view s) {
  const size_t open = s.find('[', s.find('[') + 1);
  if (open == std::string_view::npos) return {};
  const size_t close = s.find(']', open);
  if (close == std::string_view::npos) return {};
  return s.substr(open, close - open + 1);
}

// Its integers; empty when not recorded. A number too long for int64 saturates (a hostile
// trace's digits must not overflow).
std::vector<int64_t> first_ints(std::string_view s) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> v;
  int64_t x = 0;
  bool in = false;
  for (const char c : first_inner_list(s)) {
    if (c >= '0' && c <= '9') x = x > (kMax - (c - '0')) / 10 ? kMax : x * 10 + (c - '0'), in = true;
    else if (in) v.push_back(x), x = 0, in = false;
  }
  if (in) v.push_back(x);
  return v;
}

std::string dur_text(int64_t ns) {
  const double v = static_cast<double>(ns);
  if (ns >= 10'000'000) return fmt::format("{:.1f} ms", v / 1e6);
  if (ns >= 1'000'000) return fmt::format("{:.2f} ms", v / 1e6);
  if (ns >= 10'000) return fmt::format("{:.0f} us", v / 1e3);
  return fmt::format("{:.1f} us", v / 1e3);
}

std::string bytes_text(int64_t bytes) {
  const double v = static_cast<double>(bytes);
  if (bytes >= 1 << 20) return fmt::format("{:.1f} MB", v / (1 << 20));
  if (bytes >= 1 << 10) return fmt::format("{:.1f} KB", v / (1 << 10));
  return fmt::format("{} B", bytes);
}

std::string pct_text(double share) { return fmt::format("{:.0f}%", share * 100.0); }

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string top_key(const std::map<std::string, int64_t>& m) {
  const auto it = std::max_element(m.begin(), m.end(), [](auto& a, auto& b) { return a.second < b.second; });
  return it == m.end() ? std::string() : it->first;
}

int64_t overlap(int64_t b1, int64_t e1, int64_t b2, int64_t e2) { return std::max<int64_t>(0, std::min(e1, e2) - std::max(b1, b2)); }

void set_span(const Trace& t, RuleFinding& f) {
  if (!f.spans.empty()) {
    f.begin = f.spans.front().first;
    f.end = f.spans.front().second;
    for (auto [b, e] : f.spans) f.begin = std::min(f.begin, b), f.end = std::max(f.end, e);
    return;
  }
  if (f.events.empty()) return;
  f.begin = t.ts[f.events.front()];
  f.end = f.begin;
  for (EventId e : f.events) f.begin = std::min(f.begin, t.ts[e]), f.end = std::max(f.end, t.end(e));
}

std::vector<Interval> kernels_and_idle(const Trace& t, const std::vector<EventId>& kernels,
                                       const std::vector<Interval>& idle, int64_t begin, int64_t end) {
  std::vector<Interval> where = idle;
  for (EventId g : kernels)
    if (std::min(end, t.end(g)) > std::max(begin, t.ts[g])) where.emplace_back(std::max(begin, t.ts[g]), std::min(end, t.end(g)));
  return merge_intervals(std::move(where));
}

int64_t covered(const std::vector<Interval>& merged, int64_t b, int64_t e) {
  if (e <= b) return 0;
  auto it = std::lower_bound(merged.begin(), merged.end(), b, [](const Interval& iv, int64_t x) { return iv.second <= x; });
  int64_t sum = 0;
  for (; it != merged.end() && it->first < e; ++it) sum += overlap(it->first, it->second, b, e);
  return sum;
}

std::vector<Interval> uncovered(const std::vector<Interval>& merged, int64_t b, int64_t e) {
  std::vector<Interval> out;
  if (e <= b) return out;
  auto it = std::lower_bound(merged.begin(), merged.end(), b, [](const Interval& iv, int64_t x) { return iv.second <= x; });
  int64_t cur = b;
  for (; it != merged.end() && it->first < e; ++it) {
    if (it->first > cur) out.emplace_back(cur, it->first);
    cur = std::max(cur, it->second);
  }
  if (cur < e) out.emplace_back(cur, e);
  return out;
}

}  // namespace ttap::rules
