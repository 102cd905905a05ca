// What every rule detector needs from a trace, computed once per trace by RuleEngine's
// constructor: GPU activity by start with its category, the primary device's busy,
// compute and communication time as merged intervals, launches by launch time, the main
// CPU thread's top-level events, and the small lists of spans the rules look for
// (DataLoader, optimizer, syncs, allocations, compiled regions). A range query is then a
// couple of binary searches plus a walk over what lies inside the range.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ttap/analyze.hpp"
#include "ttap/rules.hpp"

namespace ttap::rules {

// Facts about a name, computed once per distinct name (traces repeat a few thousand names).
enum NameFlag : uint32_t {
  kSyncCall = 1u << 0,         // cuda/hip Stream/Device/Event Synchronize
  kBlockingMemcpy = 1u << 1,   // cudaMemcpy / hipMemcpy without Async (host waits for the copy)
  kMemcpyCall = 1u << 2,       // any cuda/hip memcpy runtime call
  kAllocCall = 1u << 3,        // cudaMalloc / cudaFree / hipMalloc / hipFree (device memory)
  kDataLoader = 1u << 4,       // enumerate(DataLoader)#...__next__
  kOptimizerStep = 1u << 5,    // Optimizer.step#X.step
  kZeroGrad = 1u << 6,         // Optimizer.zero_grad#X.zero_grad
  kCompiledRegion = 1u << 7,   // Torch-Compiled Region: F/N
  kDynamoCompile = 1u << 8,    // TorchDynamo compilation frames/ops (not the cache lookup)
  kTensorCoreKernel = 1u << 9, // kernel name shows tensor-core math
  kLayoutKernel = 1u << 10,    // nchwToNhwc / nhwcToNchw kernels
  kCommKernel = 1u << 11,      // NCCL / RCCL collective kernels
  kCastOp = 1u << 12,          // aten::to / aten::_to_copy
  kCloneOp = 1u << 13,         // aten::contiguous / aten::clone
  kMultiTensorKernel = 1u << 14,  // multi_tensor_apply / fused optimizer kernels
  kSyncOp = 1u << 15,          // aten::item, _local_scalar_dense, nonzero, is_nonzero, ...
  kEmptyCache = 1u << 16,      // torch.cuda.empty_cache frames
  kCommWait = 1u << 17,        // waits on a collective (aten::wait, c10d / functional wait_tensor)
  kGraphCapture = 1u << 18,    // CUDA/HIP graph capture: capture_begin/capture_end, stream Begin/EndCapture, graph instantiation
  kCompiledCall = 1u << 19,    // a torch.compile'd graph's call: "## Call CompiledFxGraph ... ##", its guard check
  kBackwardCall = 1u << 20,    // loss.backward()'s wait for the autograd engine: run_backward, _engine_run_backward
  kAutogradOp = 1u << 21,      // the engine's own op per graph node: autograd::engine::evaluate_function: X
  kProfilerFrame = 1u << 22,   // torch.profiler's own Python frames: torch/autograd/profiler.py(...), torch/profiler/profiler.py(...)
};

using Interval = std::pair<int64_t, int64_t>;

// Events sorted by start, with the longest duration so that "overlaps [b, e)" starts its
// search at the first event that could still be running at b.
struct SpanList {
  std::vector<EventId> events;
  std::vector<int64_t> starts;
  int64_t max_dur = 0;

  void add(EventId e, int64_t ts, int64_t dur) {
    events.push_back(e);
    starts.push_back(ts);
    max_dur = std::max(max_dur, dur);
  }
  void sort(const Trace& t);
  // Calls f(EventId) for each event overlapping [b, e) (instants: starting in it).
  template <typename F>
  void each_overlapping(const Trace& t, int64_t b, int64_t e, F f) const {
    auto it = std::lower_bound(starts.begin(), starts.end(), b - max_dur);
    for (size_t i = static_cast<size_t>(it - starts.begin()); i < events.size() && starts[i] < e; ++i) {
      const EventId ev = events[i];
      if (t.end(ev) > b || (t.dur[ev] == 0 && t.ts[ev] >= b)) f(ev);
    }
  }
};

struct RuleIndex {
  RuleIndex(const Trace& trace, const EventTree& tree);

  const Trace& t;
  const EventTree& tree;
  std::vector<uint32_t> name_flags;  // by StringId
  bool has(EventId e, uint32_t flag) const { return (name_flags[t.name[e]] & flag) != 0; }

  // ---- GPU side ----
  std::vector<EventId> gpu;          // all GPU activity by start
  std::vector<int64_t> gpu_start;
  int64_t gpu_max_dur = 0;           // the longest GPU activity: how far back one may still run
  std::vector<OpCategory> gpu_cat;   // per position in gpu
  std::vector<uint8_t> gpu_in_optimizer;  // launched inside an optimizer step or zero_grad span
  int32_t device = -1;               // the device with the most GPU time (the one judged)
  int64_t compute_stream = -1;       // its stream with the most non-communication kernel time
  std::vector<Interval> busy;        // primary device: any activity, merged
  std::vector<Interval> compute;     // kernels and memsets that are not communication
  std::vector<Interval> comm;        // communication kernels
  std::vector<Interval> comm_side;   // those off the compute stream (on it, they block compute)
  std::vector<Interval> compute_stream_busy;  // the compute stream alone
  int64_t gpu_first = 0, gpu_last = 0;  // primary device's first start and last end
  int64_t step_first = 0, step_last = 0;  // the same, widened to the ProfilerStep spans
  int num_sms = 0;                   // 0 when unknown
  int compute_major = 0;             // 0 when unknown
  bool amd = false;

  // Launches by launch-call start: (call start, position in gpu).
  std::vector<int64_t> launch_ts;
  std::vector<uint32_t> launch_gpu;
  int64_t launch_latency = 0;  // 5th percentile of launch-to-start delay, at most 100 us: an idle queue's latency

  // ---- CPU side ----
  TrackId main_thread = UINT32_MAX;  // the thread that launched the most GPU work
  SpanList main_top;                 // its top-level events (under ProfilerStep when present)
  // The thread that holds the ProfilerStep spans (the training loop's Python thread) when it
  // is not main_thread: in DDP training the autograd thread launches the backward and so
  // launches most, while the loop's own host work (metrics, logging, the optimizer's Python)
  // runs here. Its top-level events under the steps; empty when it is main_thread.
  TrackId step_thread = UINT32_MAX;
  SpanList step_top;
  // The autograd engine's threads when they are neither of the above: loss.backward() on the
  // loop's thread waits while the engine runs the backward pass on its own thread, so what
  // keeps the GPU waiting then is there. Their evaluate_function ops (kAutogradOp).
  SpanList autograd_top;
  SpanList cpu_ops;                  // every cpu_op, all threads
  SpanList bulk_copies;              // host<->device copies of at least 64 KB (not small), primary device
  // syncs: synchronizing calls, blocking cudaMemcpy, and async copies to pageable host memory
  // (which return only when the queue ahead of them is done).
  SpanList dataloader, optimizer, zero_grad, compiled, dynamo, syncs, allocs, memcpy_calls, empty_cache;
  // CUPTI's own records of the driver loading a kernel's module on its first call (lazy loading,
  // CUDA_MODULE_LOADING=LAZY): "Runtime Triggered Module Loading", "Lazy Function Loading"
  // (category overhead). The launching thread waits in the runtime call meanwhile (gpuzoo_0010: 12.0
  // ms inside aten::conv2d's cudaFuncGetAttributes, the GPU idle).
  SpanList module_loads;
  // Where the loop's thread (main_thread, step_thread) sits in a call into torch (a
  // "<built-in ...>" Python frame over ops) for at least kMinGilWait after its ops returned,
  // while another thread of the process runs Python: the binding needs the GIL back to return.
  // On the GPU zoo's recordings with stacks 30 of the 31 such stretches of 100 us or more
  // (0.1-1.4 ms) lie under the DataLoader's pin-memory thread taking a batch from the workers
  // (unpickling, rebuilding and pinning it), one under the multiprocessing queue's feeder
  // thread, the GPU idle (gpuzoo_0023, 0032, 0064). Sorted by start.
  std::vector<Interval> gil_waits;
  std::vector<uint8_t> gil_wait_pin_memory;  // per wait: that thread is in pin_memory.py
  int64_t warmup_end = INT64_MIN;    // allocations before this are warm-up
  int64_t median_step = 0;           // ns, 0 without steps
  // The first of several steps is warm-up (cuDNN autotuning, allocator growth, lazy
  // initialization, DataLoader workers starting) when it shows it: it lasts at least
  // kWarmupStepRatio times the median of the later steps. A profiler schedule's warmup
  // phase usually leaves the first recorded step as long as the others (every public trace
  // with several steps but one), and then it is steady state like them.
  bool first_step_warmup = false;
  // CUDA/HIP graph capture on any thread, merged: from each stream Begin-Capture call to the
  // end of its End-Capture call. Kernels launched in there are recorded into the graph, not
  // run, so the GPU idles while the host captures: one-time warm-up work, not the step's.
  std::vector<Interval> captures;
  // Where the host does capture work, merged: the captures above and the calls that capture
  // or instantiate a graph (capture_begin/capture_end, cudaGraphInstantiate) with their
  // whole length. A finding whose cost lies mostly in here is one-time (RuleFinding::one_time).
  std::vector<Interval> capture_work;

  // ---- range helpers ----
  // Positions in `gpu` of activity starting in [b, e). Counting rules judge each kernel once,
  // in the range it starts in: launch_bound, redundant_copy, the copy rules (copies_in),
  // fp32/low_occupancy and the other kernel rules (each_kernel), comm_blocks_compute; and
  // gpu_range(e, e + 1) is "what starts as an idle gap ends" (gpu_idle, launch_gaps,
  // comm_blocks_compute's waiter).
  std::pair<size_t, size_t> gpu_range(int64_t b, int64_t e) const;
  // Positions in `gpu` of activity running in [b, e): starting in it or before it and still
  // running at b. A range inside one long kernel (hta_sampled_rank0: a 67.8 ms SendRecv
  // around a 12 ms window) has that kernel at work in it, though none starts there; for
  // what occupies a range (comm_not_overlapped's exposed collectives).
  std::vector<size_t> gpu_overlapping(int64_t b, int64_t e) const;
  // Positions in launch_ts of launches issued in [b, e).
  std::pair<size_t, size_t> launch_range(int64_t b, int64_t e) const;
  // Idle gaps of the primary device inside [b, e), clipped; only between its first and last
  // GPU activity (before the first kernel the GPU is not "idle", it has not started).
  std::vector<Interval> idle_gaps(int64_t b, int64_t e) const;
  // The same, counting the GPU idle from the start of the first profiled step to the end of
  // the last: for an idle a specific host span explains (a DataLoader wait that opens a
  // one-step profile keeps the GPU waiting, though no kernel of the trace ran before it).
  std::vector<Interval> idle_gaps_in_steps(int64_t b, int64_t e) const;
  // The whole idle gaps that overlap [b, e), not clipped: a gap's length says what kind of
  // stall it is, and a short range may see only part of a long gap.
  // in_steps: the GPU counts as idle from the first profiled step's start to the last one's
  // end (see idle_gaps_in_steps): CPU work that opens a step before any kernel runs keeps
  // the step waiting as much as work between kernels does.
  std::vector<Interval> whole_idle_gaps(int64_t b, int64_t e, bool in_steps = false) const;
  // Whether the GPU's record spans a good part of the profiled steps, so that the GPU may be
  // counted idle between the steps' edges and its first or last activity (a trace whose
  // kernels were mostly not recorded, such as graph replays, shows nothing there, not idle).
  // In 128 bits: 4 x a span of timestamps near the loader's limits overflows int64.
  bool gpu_record_spans_steps() const { return __int128{4} * (gpu_last - gpu_first) >= step_last - step_first; }
  bool on_primary(EventId g) const { return t.track_of(g).device == device; }
  // When the GPU can next start work after the host returns at `ts`: the first launch issued
  // at or after it, plus the idle-queue latency (`ts` itself when nothing follows).
  int64_t resume_after(int64_t ts) const;
  // When the GPU ran dry during the blocking call `call` (a sync, or a copy that waits for
  // the queue): the end of the device's last activity before the call returned (less the
  // idle-queue latency; for a copy, before its own copy started), not before the call
  // began. GPU idle from then until the host launches again is the call's: the host sat in
  // it, launching nothing. Idle between its queued work before that is the queue's own.
  int64_t drained_during(EventId call) const;
  // The innermost cpu_op enclosing e (e itself excluded), following launches for GPU work.
  EventId enclosing_op(EventId e) const;
  // Whether e is graph-capture work: a capture or instantiation call, or an event that
  // runs mostly inside a capture (a model's forward being recorded).
  bool in_graph_capture(EventId e) const;
  // Whether every one of these host events is graph-capture work or lies mostly in
  // capture_work (torch.cuda.graph's setup around capture_begin); false for none.
  bool all_capture_work(const std::vector<EventId>& events) const;
  // Whether [b, e) lies inside a step after the first, or after warmup_end without steps.
  bool after_warmup(EventId e) const;
};

// After a synchronizing call returns, the GPU idle until the host launches again is the
// sync's when the host gets back to launching within this (the value read is used and the
// step goes on).
constexpr int64_t kSyncResumeSlack = 1'000'000;

// ---- shared helpers for detectors ----
double ramp(double x, double lo, double hi);
// Confidence of a detector whose signal passed its firing threshold `fire`; reaches 1 at
// `strong`. The floor 0.4 says "it fired, barely"; calibration per detector is in its
// thresholds.
double confidence_between(double signal, double fire, double strong);
std::string dur_text(int64_t ns);
std::string bytes_text(int64_t bytes);
std::string pct_text(double share);
// `s` with ASCII letters in lower case: names matched whatever their case (Conv2d, conv2d).
std::string ascii_lower(std::string_view s);
// The key with the most time (the first of equals), "" for none: the op or kernel an
// evidence line names.
std::string top_key(const std::map<std::string, int64_t>& m);
int64_t overlap(int64_t b1, int64_t e1, int64_t b2, int64_t e2);
// The first inner list of a JSON list of lists, brackets included ("[16, 32, 80, 80]" of
// "[[16, 32, 80, 80], []]"): an op's first input's dims or strides; "" when not recorded.
std::string_view first_inner_list(std::string_view s);
// Its integers; empty when not recorded.
std::vector<int64_t> first_ints(std::string_view s);
// Length of merged intervals within [b, e).
int64_t covered(const std::vector<Interval>& merged, int64_t b, int64_t e);
// Parts of [b, e) not covered by merged intervals.
std::vector<Interval> uncovered(const std::vector<Interval>& merged, int64_t b, int64_t e);

// User code above the events (see locations.cpp for what counts as user code).
std::vector<CodeLocation> user_locations(const RuleIndex& ix, const std::vector<EventId>& events,
                                         size_t max_locations = 3);
// What the main thread was in during [b, e), named for a person: from `top` down through the
// child that covers most of the range, the innermost user frame ("train.py(42): step");
// `top`'s own name when no user frame is below it (not "<frozen runpy>(198): _run_module_as_main").
std::string user_frame_name(const RuleIndex& ix, EventId top, int64_t b, int64_t e);
// The innermost user code frame ("train.py(42): step") above an event, kNoEvent without one
// (traces recorded without with_stack have none).
EventId user_frame_above(const RuleIndex& ix, EventId e);
// The event user_frame_name names: the innermost user frame, else `top`.
EventId user_frame_at(const RuleIndex& ix, EventId top, int64_t b, int64_t e);
// The frame of a profiling, timing or benchmark harness that makes the call `e`: a
// torch.profiler or torch.utils.benchmark frame above it, or the innermost user frame when its
// module or function is named for one (moca/library/profiling/profile.py: run_torch_profiler,
// which synchronizes to time each step); nullopt when the job's own code makes the call.
std::optional<CodeLocation> harness_frame(const RuleIndex& ix, EventId e);
// " at file:line" for the first location, "" when there is none: the tail of a fix.
std::string at_text(const std::vector<CodeLocation>& locs);
// The fix of a finding whose calls (`what`, at `where`) are made while a CUDA graph is set up
// or captured, which the engine marks one-time: there is nothing to take out of a step loop.
std::string capture_setup_fix(std::string_view what, std::string_view where);
// Whether `ts` falls in a first step that is warm-up (RuleIndex::first_step_warmup), not the
// steady state the ids describe (host_rules.cpp).
bool in_warmup_step(const RuleIndex& ix, int64_t ts);
// A finding's begin and end: where its cost lies when it names that (the extent of its
// spans), else the span of its events; with neither, left as they are. Its events may run
// far outside where its cost lies (a chain of elementwise kernels followed past the range's
// edges, the kernels that end a wait after it, the copies a pageable call issues).
void set_span(const Trace& t, RuleFinding& f);
// Where a GPU-work pattern's cost lies: its kernels' (copies') time in [begin, end) and the
// GPU idle that waits for them (gaps_caused_by's). Its events are cut at 256 and the gaps are
// no event's time, so the events alone listed 16.3 ms of places for gpuzoo_0042's 31.3 ms of
// cast_churn.
std::vector<Interval> kernels_and_idle(const Trace& t, const std::vector<EventId>& kernels,
                                       const std::vector<Interval>& idle, int64_t begin, int64_t end);

struct IdleParts;  // what the host did in a GPU idle gap (below)

// What detectors hand back: findings, and the GPU idle time they account for, so that
// gpu_idle reports only what no specific id explains.
struct DetectorOutput {
  std::vector<RuleFinding> findings;
  std::vector<Interval> explained_idle;
  // The launch gaps (see launch_gaps) a pattern's own launches caused, taken as its cost
  // (claim_launch_gaps): launch_bound, which runs after those patterns, leaves them out.
  std::vector<Interval> caused_launch_gaps;
  // launch_bound's part of the long gaps (eager dispatch, sorted): gpu_idle names a gap whole
  // and says how much of it is that dispatch.
  std::vector<Interval> dispatch_idle;
  // idle_parts of each stretch of a long gap judged in this range, by (gap, stretch):
  // launch_bound and gpu_idle read the same long gaps, and where no finding between them cuts a
  // gap they read the same stretches (idle_parts_of).
  std::map<std::array<int64_t, 4>, std::unique_ptr<IdleParts>> idle_parts_seen;
};

// An idle gap is stall-sized from this long (one launch takes ~5-20 us; 200 us is ten
// launches' worth); shorter gaps are launch_bound's.
constexpr int64_t kLongGap = 200'000;
// A kernel that starts within this of its launch (beyond the idle-queue latency) found the
// queue empty: the GPU was waiting for it.
constexpr int64_t kEmptyQueueSlack = 10'000;
// A call into torch returns within a few microseconds of its last op (argument wrapping); a
// longer stay while another Python thread runs is a wait for the GIL (RuleIndex::gil_waits).
constexpr int64_t kMinGilWait = 50'000;

// A GPU idle gap in a range (clipped to it: [begin, end)), `whole` its unclipped length,
// that ends when the kernel at position `next` of RuleIndex::gpu arrives as soon as it was
// launched: the GPU waited for the host to launch it (launch_gaps.cpp).
struct LaunchGap {
  int64_t begin, end, whole;
  size_t next;
};
// The launch gaps in [begin, end) ending inside it (with past_end, also those that run past
// its end: the range sees the host on its way to that launch), outside optimizer steps.
std::vector<LaunchGap> launch_gaps(const RuleIndex& ix, int64_t begin, int64_t end, bool past_end = false);
// The gaps whose arriving kernel `caused` says the pattern launched, and no pattern before
// it claimed; a long gap only when the host spent most of it in that kernel's op, or when it
// lies between two of the pattern's launches with nothing else recorded on the host (those
// also go to `between` when given).
std::vector<Interval> gaps_caused_by(const RuleIndex& ix, const std::vector<LaunchGap>& gaps, const DetectorOutput& out,
                                     const std::function<bool(size_t)>& caused, std::vector<Interval>* between = nullptr);
// The evidence line for those long gaps ("" when none): what of the idle the host spent
// between two of the pattern's calls (`what`: "casts") with nothing else recorded.
std::string between_launches_text(const std::vector<Interval>& between, std::string_view what);
// Their idle time in all.
int64_t idle_of(const std::vector<Interval>& ivs);
// The kernels that end the gaps of `gaps` kept in `ivs` (gaps_caused_by's result), in order:
// a pattern's events when only the wait for its kernels shows in the range.
std::vector<EventId> kernels_ending(const RuleIndex& ix, const std::vector<LaunchGap>& gaps, const std::vector<Interval>& ivs);
// Records them in out, as explained idle (for gpu_idle) and as caused (for launch_bound):
// for a pattern that reports them as its cost.
void claim_launch_gaps(const std::vector<Interval>& ivs, DetectorOutput& out);

// Whether `e` launched GPU work from its own thread while it ran; with any_thread, whether
// any thread did: a span on the training loop's thread while the autograd thread launches
// the backward waits for that work, it is not host work keeping the GPU waiting
// (idle_causes.cpp).
bool launches_from(const RuleIndex& ix, EventId e, bool any_thread = false);

// What the host was doing during the GPU idle [b, e) (idle_causes.cpp), as parts of it that
// add up to its length. The launching threads (the one that launches most, the training loop's,
// the autograd engine's) are read, each moment counted once, in this order:
struct IdleParts {
  // After a launch call to the judged device returned in the gap, or before it for the work that
  // ends it (and longer than an idle queue's latency before the GPU started anything): the GPU
  // had work queued and did not run it. No GPU work of the trace runs on the device then, so
  // nothing the trace records there holds it.
  int64_t queued = 0;
  // Per gap (its end, the wait): its idle from the first return of such a launch (or the gap's
  // start) to the GPU's start.
  std::vector<std::pair<int64_t, int64_t>> queued_waits;
  // The driver loading a kernel's module on its first call (RuleIndex::module_loads): counted
  // first, it is what the host waits in then (a runtime call inside a "slow op").
  int64_t loading = 0;
  // In a synchronizing or allocator call.
  int64_t runtime = 0;
  // In an op that launches GPU work (its outermost operator on the thread, outside optimizer
  // steps and zero_grad): dispatching the next op, the per-op host overhead eager mode pays (Python
  // argument parsing, the dispatcher, allocation, launch setup) before the kernel exists.
  int64_t dispatch = 0;
  std::vector<Interval> dispatch_spans;  // where, sorted
  std::vector<EventId> dispatch_ops;     // those ops, in time order
  // In an op that launches but holds at least a long gap (kLongGap) of host time per launch:
  // one slow op (a first call, a blocking copy, host work inside it), not the per-op cost of
  // many.
  int64_t long_ops = 0;
  std::vector<EventId> long_op_events;
  // In such an op inside an optimizer step or zero_grad (those rules judge that idle).
  int64_t optimizer = 0;
  // In an op that launches nothing (CPU work, tensor setup).
  int64_t quiet = 0;
  // In a call into torch after its ops returned, while another Python thread of the process
  // ran (RuleIndex::gil_waits): waiting for the GIL. gil_pin_memory: the part of it where that
  // thread is the DataLoader's pin-memory thread.
  int64_t gil = 0, gil_pin_memory = 0;
  // In a profiled frame or annotation with no op under it (a Python function's own code).
  int64_t frames = 0;
  // Nothing recorded on those threads: host code the profiler does not record.
  int64_t unprofiled = 0;
  // Adds another gap's parts (spans and ops appended: add gaps in time order).
  void add(const IdleParts& o);
};
// [b, e) is a part of the whole idle gap `gap` (the rest explained by other patterns).
IdleParts idle_parts(const RuleIndex& ix, Interval gap, int64_t b, int64_t e);
// The same, computed once per range and stretch (out.idle_parts_seen).
const IdleParts& idle_parts_of(const RuleIndex& ix, Interval gap, int64_t b, int64_t e, DetectorOutput& out);
// The evidence line for those parts, largest first, the zero ones left out: "the host in those
// gaps: 1.02 ms with nothing recorded, 412 us dispatching ops that launch (9 ops: aten::conv2d
// x3, aten::batch_norm x3, aten::relu_ x2, ...), ...".
std::string idle_parts_text(const RuleIndex& ix, const IdleParts& p);
// The fix for `idle` (the gaps' length) when one part holds most of it: "" where none does, or
// where the part is nothing recorded (gpu_idle's general fix).
std::string idle_parts_fix(const RuleIndex& ix, const IdleParts& p, int64_t idle);
// "9 ops: aten::conv2d x3, aten::batch_norm x3, aten::relu_ x2, ..." (the three most frequent).
std::string ops_tally_text(const RuleIndex& ix, const std::vector<EventId>& ops);

using Detector = void (*)(const RuleIndex&, int64_t begin, int64_t end, DetectorOutput&);

// The same-size copy the other way in the same step (without steps, within a second) of a
// large host<->device copy: the two halves of an offload round trip; kNoEvent when none
// (transfer_rules.cpp). Below 1 MB only out and back counts (a download, then the same bytes
// uploaded again): an inference step uploads its input and downloads an output of the same
// size in the other order.
EventId round_trip_partner(const RuleIndex& ix, EventId copy);
// The synchronizing call that waits for `copy` to land: a sync issued under the same parent
// as the copy's launching call, after it (tensor.cpu(), .to() with the default blocking
// copy); kNoEvent when none.
EventId sync_completing(const RuleIndex& ix, EventId copy);

// When the host, back from the synchronizing call (or blocking copy op) `sync`, launches
// again: its next launch (plus the idle-queue latency), or the end of the profiled steps when
// it launches nothing more (sync_rules.cpp).
int64_t next_launch_after(const RuleIndex& ix, EventId sync);
// Whether the host, back from `sync`, works before it launches again for longer than
// kSyncResumeSlack and than the sync waited: a short read that begins long host work (numpy
// statistics over outputs just copied). The GPU idle after the return is then that work's,
// cpu_bound_step's, not the sync's (nor a copy's): it explains most of the stall
// (sync_rules.cpp).
bool host_works_after(const RuleIndex& ix, EventId sync);
// Whether the synchronizing call `sync` runs under an op that reads a device value
// (.item(), .nonzero() and the like, kSyncOp): its op or that op's parent is one
// (sync_rules.cpp).
bool under_value_read(const RuleIndex& ix, EventId sync);

// One per catalog id, grouped by family (sync_rules.cpp, transfer_rules.cpp, ...).
void detect_host_sync(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_alloc_churn(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_pageable_memcpy(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_small_transfers(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_offload_pingpong(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_redundant_copy(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_dataloader_stall(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_cpu_bound_step(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_launch_bound(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_gpu_idle(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_optimizer_single_tensor(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_grad_not_set_to_none(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_unfused_elementwise(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_fp32_no_tensor_cores(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_layout_conversion(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_cast_churn(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_low_occupancy(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_comm_not_overlapped(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_comm_blocks_compute(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_graph_breaks(const RuleIndex&, int64_t, int64_t, DetectorOutput&);

// What five of them judge on CPU-only traces, where the work is CPU ops (cpu_op_rules.cpp).
void detect_cast_churn_on_cpu(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_redundant_copy_on_cpu(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_layout_conversion_on_cpu(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_unfused_elementwise_on_cpu(const RuleIndex&, int64_t, int64_t, DetectorOutput&);
void detect_cpu_bound_step_on_cpu(const RuleIndex&, int64_t, int64_t, DetectorOutput&);

}  // namespace ttap::rules
