// `ttap diff BASE NEW`: what changed between two traces of the same workload, and whether
// it is a regression (TorchBench's nightly gate: a metric worse by more than a threshold).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ttap/analyze.hpp"

namespace ttap {

struct DiffOptions {
  double threshold_pct = 7.0;  // TorchBench's default
};

// One gated metric: median step time, median GPU busy time per step, peak device memory.
struct GateResult {
  std::string metric;
  double base = 0;  // ns, or bytes for memory
  double next = 0;
  double delta_pct = 0;
  bool regressed = false;
  // The metric is missing on that side (no [memory] events): the row stays, reads "n/a",
  // and cannot regress.
  bool base_missing = false, new_missing = false;
};

// Base and new figures for one key (a step, category, op or kernel).
struct DeltaRow {
  std::string key;
  int64_t base_count = 0;
  int64_t new_count = 0;
  int64_t base_time = 0;  // ns
  int64_t new_time = 0;
  int64_t delta() const { return new_time - base_time; }
};

// Where the two trees part: a node only one side has, or a matched node whose own time
// (its duration less what its children account for) changed. `path` is the chain of
// matched ancestors down to the lowest common one.
struct TreeChange {
  std::string path;
  std::string name;
  std::string kind;  // "only in new", "only in base", "self time"
  int64_t delta = 0;  // ns, summed over the aligned steps
  int64_t occurrences = 0;
};

struct TraceDiff {
  std::vector<GateResult> gates;
  bool regressed = false;
  std::vector<DeltaRow> steps;       // aligned by order; key "base#N -> new#M"
  std::vector<GpuTimeline> base_timeline, new_timeline;
  // "GPU 0 (Tesla V100-SXM2-16GB)", one per timeline entry: each side's devices as that
  // side's trace names them.
  std::vector<std::string> base_devices, new_devices;
  // The two runs differ in what they ran on (GPU model, world size, rank): their times
  // may not be one workload's.
  std::vector<std::string> warnings;
  std::vector<DeltaRow> categories;  // GPU time by op category
  std::vector<DeltaRow> ops;         // CPU time by op name (outermost occurrence), sorted by |delta|
  std::vector<DeltaRow> kernels;     // GPU time by kernel name, sorted by |delta|
  std::vector<TreeChange> tree;      // sorted by |delta|
  std::vector<std::string> top_contributors;  // the largest regressions, for the gate message
};

TraceDiff diff_traces(const Trace& base, const EventTree& base_tree, const Trace& next, const EventTree& next_tree,
                      const DiffOptions& options);

// Names that differ between runs for the same work, made equal for matching: the
// DataLoader iterator class (single- vs multi-process) and ProfilerStep numbers.
std::string normalized_op_name(std::string_view name);

// Peak device memory from [memory] events: the largest "Total Allocated" on a GPU, or the
// running sum of allocation sizes when the trace predates that field. nullopt without
// GPU memory events.
std::optional<int64_t> peak_device_memory(const Trace& trace);

}  // namespace ttap
