// The event tree (TraceLens's Trace2Tree): CPU nesting by time containment per thread,
// runtime launches linked to the GPU work they started (by correlation id), Python frames
// linked to their parents (by Python id), and ProfilerStep#N spans as steps.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ttap/trace.hpp"

namespace ttap {

struct Step {
  EventId event = kNoEvent;  // the ProfilerStep#N annotation
  int64_t number = -1;       // N
  int64_t ts = 0;            // ns
  int64_t end = 0;           // ns
};

struct TreeDiagnostics {
  uint64_t partial_overlaps = 0;       // a CPU event that started inside another but ended after it
                                       // (kept as its child within 1 us, else moved up)
  uint64_t gpu_without_launch = 0;     // GPU activity whose correlation id matched no launch
  uint64_t launches_without_gpu = 0;   // kernel-launching runtime calls whose GPU work is missing
  uint64_t python_without_parent = 0;  // python_function whose parent id is not in the trace
};

class EventTree {
 public:
  static EventTree build(const Trace& trace);

  // Parent in the tree: the enclosing CPU event for CPU events, the launching runtime call
  // for GPU activity. kNoEvent for roots and for events outside the tree (instants, GPU
  // annotations).
  EventId parent(EventId e) const { return parent_[e]; }
  uint32_t depth(EventId e) const { return depth_[e]; }
  // Children ordered by start time (GPU work under its launch).
  std::span<const EventId> children(EventId e) const {
    return {children_.data() + child_begin_[e], children_.data() + child_begin_[e + 1]};
  }
  bool in_tree(EventId e) const { return in_tree_[e] != 0; }

  // GPU activity -> the cuda_runtime/cuda_driver call that launched it (kNoEvent if none).
  EventId launcher(EventId gpu_event) const { return launcher_[gpu_event]; }
  // GPU activity -> the innermost cpu_op above its launch (kNoEvent if none), the op a
  // kernel's time is attributed to.
  EventId owner_op(EventId gpu_event) const { return owner_op_[gpu_event]; }
  // python_function -> its parent frame by Python parent id (kNoEvent if none).
  EventId python_parent(EventId e) const { return python_parent_[e]; }
  // The step an event belongs to (index into steps()), -1 when outside every step. GPU
  // work belongs to the step of its launch, even when it runs after the step's CPU end.
  int32_t step_of(EventId e) const { return step_of_[e]; }

  const std::vector<Step>& steps() const { return steps_; }
  // Roots of each CPU track, by start time.
  const std::vector<std::vector<EventId>>& roots_by_track() const { return roots_; }
  // GPU activity (kernels, copies, sets) of each track, by start time; empty for CPU tracks.
  const std::vector<std::vector<EventId>>& gpu_by_track() const { return gpu_events_; }
  // All GPU activity, by start time.
  const std::vector<EventId>& gpu_events() const { return all_gpu_; }
  const TreeDiagnostics& diagnostics() const { return diagnostics_; }

  // The chain from `e` up to its root (e first), following launches for GPU work.
  std::vector<EventId> path_to_root(EventId e) const;

 private:
  // Per-event arrays on huge pages (see store_vector.hpp).
  StoreVector<EventId> parent_;
  StoreVector<uint32_t> depth_;
  StoreVector<uint32_t> child_begin_;
  StoreVector<EventId> children_;
  StoreVector<uint8_t> in_tree_;
  StoreVector<EventId> launcher_;
  StoreVector<EventId> owner_op_;
  StoreVector<EventId> python_parent_;
  StoreVector<int32_t> step_of_;
  std::vector<Step> steps_;
  std::vector<std::vector<EventId>> roots_;
  std::vector<std::vector<EventId>> gpu_events_;
  std::vector<EventId> all_gpu_;
  TreeDiagnostics diagnostics_;
};

// "ProfilerStep#12" -> 12; -1 when the name is not a profiler step.
int64_t profiler_step_number(std::string_view name);

}  // namespace ttap
