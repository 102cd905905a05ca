// Analyses: pure functions over (Trace, EventTree) that return plain data. All times are
// nanoseconds; renderers convert.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ttap/trace.hpp"
#include "ttap/tree.hpp"

namespace ttap {

// ---- Scope ------------------------------------------------------------------------------
// The steady state the breakdowns describe, per device: a span. When the GPU side carries
// ProfilerStep#N annotations (gpu_user_annotation) that hold the GPU work their CPU steps
// launched (CUDA's do: Kineto draws each around that work), from the first one's start to
// the last one's end. When they are markers instead (ROCm writes 16-18 us ones that hold
// almost none of it), the span such annotations would have: from the start of the first
// GPU event the CPU steps launched (by correlation) to the end of the last. Otherwise all
// GPU activity.
struct GpuScope {
  int32_t device = -1;
  int64_t begin = 0;
  int64_t end = 0;
  bool from_steps = false;
  bool by_launch = false;  // the span comes from the steps' launches: the annotations are markers
};
std::vector<GpuScope> gpu_scopes(const Trace& trace, const EventTree& tree);
// GPU activity that starts inside its device's scope, by start time.
std::vector<EventId> scoped_gpu_events(const Trace& trace, const EventTree& tree);

// ---- GPU timeline (TraceLens's gpu_timeline) -------------------------------------------
// Interval unions over all streams of one device, clipped to its scope. computation =
// kernels and memsets that are not communication; exposed_* = the part not hidden under
// computation (and, for memcpy, not under communication either); total = the scope's span.
struct GpuTimeline {
  int32_t device = -1;
  int64_t computation = 0;
  int64_t communication = 0;
  int64_t exposed_communication = 0;
  int64_t memcpy = 0;
  int64_t exposed_memcpy = 0;
  int64_t busy = 0;
  int64_t idle = 0;
  int64_t total = 0;
  int64_t begin = 0;  // scope start
  int64_t end = 0;    // scope end
  bool from_steps = false;
  bool by_launch = false;  // the scope's by_launch
};

std::vector<GpuTimeline> gpu_timeline(const Trace& trace, const EventTree& tree);
// The same over one span [begin, end) for every device (from_steps set): what `ttap
// analyze`'s headline reports over the CPU-side steps, the time the user waits for.
std::vector<GpuTimeline> gpu_timeline(const Trace& trace, const EventTree& tree, int64_t begin, int64_t end);

// Collective kernels by name: NCCL, RCCL, and the symmetric-memory all-reduce kernels of
// newer stacks (multimem_all_reduce_kernel and friends).
bool is_communication_kernel(std::string_view kernel_name);

// A kernel's name as a person reads it in a report: the function's qualified name without
// its return type and parameter list ("at::native::vectorized_elementwise_kernel" of a
// 600-character "void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)"), its
// template arguments kept only where the whole stays short
// ("cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>"), at most 80 characters.
// Names that are no C++ signature ("Memcpy HtoD (Pageable -> Device)", Tensile's
// "Cijk_..." names, Triton's) keep their words. The full name stays in the trace's data.
std::string readable_kernel_name(std::string_view name);

// A name without the memory addresses Python writes into it ("<built-in method  of
// pybind11_builtins.pybind11_detail_function_record_v1_... object at 0x7fe3f33f0b30>" ->
// "... object>"): the address changes every run, so a report line, an origin, a --baseline
// match and a SARIF fingerprint that print it would too.
std::string without_addresses(std::string_view name);

// "1 gap", "3 gaps": a count with its noun, plural when it is not one; `plural` where adding
// an "s" is not the plural ("1 copy", "2 copies"). The rules' evidence and the reports alike.
std::string count_text(size_t n, std::string_view noun, std::string_view plural = {});

// ---- Op categories ---------------------------------------------------------------------
enum class OpCategory : uint8_t {
  GEMM, CONV_fwd, CONV_bwd, SDPA_fwd, SDPA_bwd, elementwise, reduce, norm_fwd, norm_bwd,
  multi_tensor_apply, triton, communication, memcpy, memset, other, kCount
};
std::string_view op_category_name(OpCategory c);
// The category of a CPU op by its name (aten::addmm -> GEMM, ...).
OpCategory categorize_op(std::string_view op_name);
// The category of GPU work: memcpy/memset by activity kind, collectives by kernel name,
// else the category of the op that launched it, else guessed from the kernel name.
OpCategory categorize_gpu_event(const Trace& trace, const EventTree& tree, EventId gpu_event);

// The same answers, computed once per distinct name: traces repeat a few thousand names
// millions of times, and substring tests per event dominated the summaries.
class NameClassifier {
 public:
  explicit NameClassifier(const Trace& trace);
  bool communication(StringId kernel_name);
  OpCategory op_category(StringId op_name);
  OpCategory gpu_category(const EventTree& tree, EventId gpu_event);
  bool dataloader(StringId name);

 private:
  template <typename F>
  uint8_t cached(std::vector<uint8_t>& cache, StringId id, F compute);
  const Trace& t_;
  std::vector<uint8_t> communication_, op_category_, kernel_category_, dataloader_;
};

struct CategoryRow {
  OpCategory category = OpCategory::other;
  int64_t op_count = 0;      // distinct launching ops (or GPU events when none)
  int64_t kernel_count = 0;  // GPU events
  int64_t kernel_time = 0;
};
// Sorted by kernel time, descending.
std::vector<CategoryRow> category_breakdown(const Trace& trace, const EventTree& tree);

// ---- Ops, shapes, kernels ---------------------------------------------------------------
struct OpRow {
  std::string name;
  OpCategory category = OpCategory::other;
  int64_t count = 0;               // op instances that launched GPU work
  int64_t direct_kernel_time = 0;  // GPU time of work this op launched itself
  int64_t kernel_count = 0;
};
std::vector<OpRow> ops_summary(const Trace& trace, const EventTree& tree);

struct ShapeRow {
  std::string name;
  std::string input_dims;
  std::string input_types;
  int64_t count = 0;
  int64_t kernel_time = 0;
  int64_t cpu_time = 0;
};
std::vector<ShapeRow> ops_by_shape(const Trace& trace, const EventTree& tree);

struct KernelRow {
  std::string name;
  std::string owner_op;
  OpCategory category = OpCategory::other;
  int64_t count = 0;
  int64_t total = 0;
  int64_t min = 0;
  int64_t max = 0;
};
std::vector<KernelRow> kernel_summary(const Trace& trace, const EventTree& tree);

// ---- Launch statistics (HTA's cuda kernel launch stats) ---------------------------------
struct LaunchStats {
  int64_t launches = 0;          // GPU events with a known launch
  int64_t kernel_launches = 0;   // of them kernels (the rest copies and memsets)
  int64_t short_kernels = 0;     // kernel shorter than its launch call
  int64_t short_kernel_time = 0;
  double launch_delay_mean = 0;  // ns; delay = GPU start - launch call start
  int64_t launch_delay_p50 = 0;
  int64_t launch_delay_p95 = 0;
  int64_t launch_delay_max = 0;
  int64_t launch_call_mean = 0;  // ns, mean duration of the launch calls
};
LaunchStats launch_stats(const Trace& trace, const EventTree& tree);

// The latency of an idle queue, from a launch call to its GPU work's start: the 5th
// percentile of the launch-to-start delays (ns) given, at most 100 us (CUDA and HIP take
// 5-50 us). A queue that never ran empty has no idle-queue sample, and its percentile is
// the queue's depth instead (11.5 ms on hta_torchrec_a100_rank0, whose launches run 162 ms
// ahead). 0 without delays. Reorders `delays`.
int64_t idle_queue_launch_latency(std::vector<int64_t>& delays);

// ---- Steps ------------------------------------------------------------------------------
struct StepRow {
  int64_t number = -1;
  int64_t duration = 0;
  int64_t gpu_busy = 0;     // union of GPU activity inside the step's time span
  int64_t dataloader = 0;   // DataLoader __next__ time on CPU threads inside the step
  int64_t memcpy = 0;       // union of memcpy activity inside the step
  int64_t kernels = 0;      // GPU events launched from the step
};
std::vector<StepRow> step_breakdown(const Trace& trace, const EventTree& tree);

bool is_dataloader_event(std::string_view name);

// ---- The profiler's Python tracer ------------------------------------------------------
// What torch.profiler's Python tracer (with_stack=True) itself costs the host, from the
// trace's own events. A built-in call that runs no op and calls nothing traced (len,
// isinstance, a getattr) takes tens of ns without the tracer; its recorded duration is the
// tracer's own work between the two timestamps it takes. Every python_function event pays
// at least that, so events per step times its median is a floor of the tracer's time per
// step (scripts/bench/tracer_overhead.py: on gpu_zoo's maskrcnn train pair, the runs with
// and without stacks differ by about twice that per event between ops).
struct PythonTracerCost {
  int64_t events_per_step = 0;  // python_function events that start inside a step, any thread
  int64_t per_event = 0;        // ns: the median recorded duration of such a built-in call
  int64_t calls_timed = 0;      // how many such calls the median is of
  int64_t per_step = 0;         // ns: events_per_step * per_event
};
// nullopt without steps or without enough such calls (kMinTimedCalls) for a median.
inline constexpr int64_t kMinTimedCalls = 20;
std::optional<PythonTracerCost> python_tracer_cost(const Trace& trace, const EventTree& tree);

// ---- Interval helpers -------------------------------------------------------------------
using Interval = std::pair<int64_t, int64_t>;  // [begin, end)
// Sorts and merges; returns disjoint intervals.
std::vector<Interval> merge_intervals(std::vector<Interval> v);
int64_t total_length(const std::vector<Interval>& merged);
// Length of a minus b (both merged).
int64_t subtract_length(const std::vector<Interval>& a, const std::vector<Interval>& b);
// Length of merged intervals clipped to [lo, hi).
int64_t clipped_length(const std::vector<Interval>& merged, int64_t lo, int64_t hi);

}  // namespace ttap
