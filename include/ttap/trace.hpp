// The Trace: a columnar, immutable store of one profiler trace's events.
//
// Events are referred to by index (EventId). Times are integer nanoseconds in the trace's
// own time base (Kineto's `ts` is microseconds; ts_ns = round(ts * 1000)), so interval
// arithmetic is exact and float-timestamp traces lose nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ttap/store_vector.hpp"
#include "ttap/strings.hpp"

namespace ttap {

using EventId = uint32_t;
using TrackId = uint32_t;
inline constexpr EventId kNoEvent = UINT32_MAX;
inline constexpr uint32_t kNoRow = UINT32_MAX;
inline constexpr int64_t kNoId = INT64_MIN;

// What an event is, normalized over the 2021 schema (Operator, Runtime, Kernel, Memcpy,
// Memset) and the current one (cpu_op, cuda_runtime, kernel, gpu_memcpy, ...).
enum class Category : uint8_t {
  Other = 0,
  CpuOp,              // cpu_op, Operator
  UserAnnotation,     // user_annotation (ProfilerStep#N, record_function ranges)
  PythonFunction,     // python_function
  CudaRuntime,        // cuda_runtime, Runtime (also HIP names on ROCm)
  CudaDriver,         // cuda_driver
  Kernel,             // kernel, Kernel
  GpuMemcpy,          // gpu_memcpy, Memcpy
  GpuMemset,          // gpu_memset, Memset
  GpuUserAnnotation,  // gpu_user_annotation
  CudaSync,           // cuda_sync (GPU-side waits)
  DataLoader,         // DataLoader (2021 schema)
  Instant,            // cpu_instant_event and other instants without a better home
  TraceSpan,          // Trace (the profiler's own span)
  Overhead,           // overhead
  kCount
};

std::string_view category_name(Category c);

enum class Phase : uint8_t { Complete, Instant };

inline bool is_gpu_activity(Category c) {
  return c == Category::Kernel || c == Category::GpuMemcpy || c == Category::GpuMemset;
}
inline bool is_launch(Category c) { return c == Category::CudaRuntime || c == Category::CudaDriver; }
inline bool is_cpu_side(Category c) {
  return c == Category::CpuOp || c == Category::UserAnnotation || c == Category::PythonFunction ||
         c == Category::CudaRuntime || c == Category::CudaDriver || c == Category::DataLoader;
}

// A timeline: a CPU thread (pid, tid) or a GPU stream (device, stream).
struct Track {
  int64_t pid = 0;
  int64_t tid = 0;
  StringId pid_label = kNoString;  // the original pid/tid text when it was not a number
  StringId tid_label = kNoString;
  bool gpu = false;                // holds GPU activity (kernels, copies)
  int32_t device = -1;             // GPU device for gpu tracks
  int64_t stream = -1;             // CUDA/HIP stream for gpu tracks
  StringId process_name = kNoString;
  StringId thread_name = kNoString;
};

// Arguments of CPU ops (cpu_op / Operator / user_annotation).
struct OpArgs {
  StringId input_dims = kNoString;     // raw JSON text, e.g. [[32, 3, 224, 224], []]
  StringId input_types = kNoString;    // raw JSON text
  StringId input_strides = kNoString;  // raw JSON text
  StringId concrete_inputs = kNoString;
  int64_t sequence_number = kNoId;
  int64_t fwd_thread_id = kNoId;
};

struct KernelArgs {
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int32_t registers_per_thread = -1;
  int32_t shared_memory = -1;
  float blocks_per_sm = -1;
  float warps_per_sm = -1;
  float est_occupancy_pct = -1;
};

struct PythonArgs {
  int64_t python_id = kNoId;
  int64_t parent_id = kNoId;
};

struct CopyArgs {  // gpu_memcpy / gpu_memset
  int64_t bytes = -1;
};

struct SyncArgs {  // cuda_sync
  StringId kind = kNoString;
  int64_t wait_on_stream = kNoId;
  int64_t wait_on_event_record_correlation = kNoId;
};

struct CollectiveArgs {
  EventId event = kNoEvent;
  StringId collective_name = kNoString;
  int64_t in_msg_nelems = -1;
  int64_t out_msg_nelems = -1;
  StringId dtype = kNoString;
  int32_t group_size = -1;
  StringId process_group_name = kNoString;
  StringId process_group_desc = kNoString;
  StringId process_group_ranks = kNoString;  // raw JSON text
};

// [memory] instant events (profile_memory=True).
struct MemoryEvent {
  int64_t ts = 0;
  TrackId track = 0;
  int64_t bytes = 0;            // + allocation, - free
  int64_t total_allocated = -1;
  int64_t total_reserved = -1;
  int32_t device_type = -1;     // 0 CPU, 1 CUDA
  int32_t device_id = -1;
};

// Flow events (ph s/t/f): ac2g (launch -> GPU) and fwdbwd (forward -> backward op).
struct FlowEvent {
  int64_t ts = 0;
  int64_t id = 0;
  TrackId track = 0;
  StringId category = kNoString;
  char phase = 's';
};

struct CounterSample {
  int64_t ts = 0;
  int64_t pid = 0;
  StringId name = kNoString;
  StringId series = kNoString;
  double value = 0;
};

struct DeviceProperties {
  int32_t id = -1;
  std::string name;
  int64_t total_global_mem = 0;
  int32_t compute_major = 0;
  int32_t compute_minor = 0;
  int32_t num_sms = 0;
  int32_t max_threads_per_sm = 0;
  int32_t warp_size = 0;
};

struct DistributedInfo {
  bool present = false;
  std::string backend;
  int32_t rank = -1;
  int32_t world_size = -1;
  std::string raw;  // the object as JSON text, kept whole
};

// Things the loader fixed up or skipped, so a user can see what happened to their input.
struct LoadDiagnostics {
  uint64_t events_seen = 0;
  uint64_t metadata_events = 0;
  uint64_t unmatched_begin_end = 0;
  uint64_t unknown_phase = 0;
  // Single bad events the default (lenient) loader repairs or drops instead of refusing
  // the whole trace; with LoadOptions::strict each is an InputError instead.
  uint64_t negative_durations_dropped = 0;  // events with "dur" < 0: left out
  uint64_t surrogates_repaired = 0;         // strings with an unpaired \uD800-\uDFFF escape: U+FFFD put in
  uint64_t ids_above_int64 = 0;             // correlation/External id/flow ids above 2^63-1: kept as their 64 bits
  uint64_t byte_order_marks = 0;            // a UTF-8 byte-order mark before the document: skipped
  uint64_t repaired_or_dropped() const {
    return negative_durations_dropped + surrogates_repaired + ids_above_int64 + byte_order_marks;
  }
};

struct Trace {
  std::string source;  // the path it came from ("-" for stdin)
  uint64_t input_bytes = 0;       // bytes read (compressed size for .gz)
  uint64_t json_bytes = 0;        // bytes of JSON parsed
  StringPool strings;

  // Event columns, all of the same length.
  StoreVector<StringId> name;
  StoreVector<Category> category;
  StoreVector<Phase> phase;
  StoreVector<TrackId> track;
  StoreVector<int64_t> ts;   // ns
  StoreVector<int64_t> dur;  // ns, 0 for instants
  StoreVector<int64_t> external_id;
  StoreVector<int64_t> correlation;
  StoreVector<uint32_t> args_row;  // row in the args table of the event's category, or kNoRow
  StoreVector<StringId> raw_category;  // the category text as written

  StoreVector<Track> tracks;
  StoreVector<OpArgs> op_args;
  StoreVector<KernelArgs> kernel_args;
  StoreVector<PythonArgs> python_args;
  StoreVector<CopyArgs> copy_args;
  StoreVector<SyncArgs> sync_args;
  StoreVector<CollectiveArgs> collectives;  // sorted by event
  StoreVector<MemoryEvent> memory_events;
  StoreVector<FlowEvent> flows;
  StoreVector<CounterSample> counters;

  std::vector<DeviceProperties> devices;
  DistributedInfo distributed;
  int64_t schema_version = -1;
  int64_t base_time_ns = kNoId;
  std::string trace_name;
  LoadDiagnostics diagnostics;

  size_t size() const { return name.size(); }
  int64_t end(EventId e) const { return ts[e] + dur[e]; }
  std::string_view name_of(EventId e) const { return strings.view(name[e]); }
  const Track& track_of(EventId e) const { return tracks[track[e]]; }

  const OpArgs* op(EventId e) const;
  const KernelArgs* kernel(EventId e) const;
  const PythonArgs* python(EventId e) const;
  const CopyArgs* copy(EventId e) const;
  const SyncArgs* sync(EventId e) const;
  const CollectiveArgs* collective(EventId e) const;
  const DeviceProperties* device(int32_t id) const;

  // Bytes the store uses (not counting reserved, untouched capacity), for -v logging.
  size_t memory_bytes() const;
};

// Microseconds (the trace's unit) from stored nanoseconds.
inline double to_us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace ttap
