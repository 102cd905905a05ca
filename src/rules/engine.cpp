// RuleEngine: runs every detector over a range, orders the findings, and scores ranges.
#include <algorithm>
#include <array>
#include <cmath>

#include "rule_index.hpp"

namespace ttap {

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::info: return "info";
    case Severity::warning: return "warning";
    case Severity::error: return "error";
  }
  return "warning";
}

namespace {

// In catalog order, except that the detectors that explain GPU idle time (syncs,
// allocations, copies, the loader) run before cpu_bound_step and launch_bound, the GPU-work
// patterns whose launches can starve the GPU (dtype casts first, whose copy kernels are
// elementwise too, then elementwise chains, layout copies and copies of a copy) before launch_bound, which
// leaves them the gaps they caused, and gpu_idle last, since it reports only the idle time
// the others left unexplained.
constexpr std::array<rules::Detector, 20> kDetectors = {
    rules::detect_host_sync,           rules::detect_alloc_churn,         rules::detect_pageable_memcpy,     rules::detect_small_transfers,
    rules::detect_offload_pingpong,    rules::detect_dataloader_stall,    rules::detect_cpu_bound_step,
    rules::detect_cast_churn,          rules::detect_unfused_elementwise, rules::detect_fp32_no_tensor_cores,
    rules::detect_layout_conversion,   rules::detect_redundant_copy,      rules::detect_launch_bound,
    rules::detect_optimizer_single_tensor, rules::detect_grad_not_set_to_none,
    rules::detect_low_occupancy,       rules::detect_comm_not_overlapped, rules::detect_comm_blocks_compute,
    rules::detect_graph_breaks,        rules::detect_gpu_idle};

// Severity from the share of the range the finding costs (severity_for_share: a quarter or
// more is an error worth fixing first, a twentieth a warning, less is information). And
// whatever the share, a finding that costs less than 1% of a step (of the profiled span
// without steps) is information: a 100th of a short inference trace is a few dozen
// microseconds, and microseconds are not errors.
constexpr double kMinStepShare = 0.01;

// Window score weight of a finding's cost: 1 - exp(-k * cost share of the range). A
// confident finding that costs the whole range scores about 0.95, one costing a quarter
// about 0.5, so a DataLoader stall that empties a window outranks FP32 math that might
// make a busy one somewhat faster.
constexpr double kCostWeight = 3.0;

// Whether a finding's cost lies mostly in CUDA graph capture work: where its cost lies (its
// spans, the GPU idle gaps it claims; else its host events' own time) covered more than
// half by ix.capture_work. GPU work is never capture work: captured kernels do not run.
bool cost_in_graph_capture(const rules::RuleIndex& ix, const RuleFinding& f) {
  if (ix.capture_work.empty()) return false;
  std::vector<Interval> where = f.spans;
  if (where.empty())
    for (EventId e : f.events)
      if (e < ix.t.size() && is_cpu_side(ix.t.category[e]) && ix.t.dur[e] > 0) where.emplace_back(ix.t.ts[e], ix.t.end(e));
  // A kernel pattern's spans hold its kernels' time as well as the idle waiting for them (a
  // chain and the gaps between its links): only their GPU-idle parts can be capture work.
  // Other spans (a copy's host calls, the idle after a sync) are judged whole.
  const bool kernels_only = !f.spans.empty() && std::all_of(f.events.begin(), f.events.end(), [&](EventId e) {
    return e < ix.t.size() && ix.t.category[e] == Category::Kernel;
  });
  int64_t total = 0, captured = 0;
  for (auto [b, e] : merge_intervals(std::move(where))) {
    total += e - b;
    if (!kernels_only) captured += rules::covered(ix.capture_work, b, e);
    else
      for (auto [ib, ie] : rules::uncovered(ix.busy, b, e)) captured += rules::covered(ix.capture_work, ib, ie);
  }
  return total > 0 && 2 * captured > total;
}

int64_t reference_span(const Trace& t, const EventTree& tree) {
  if (!tree.steps().empty()) {
    int64_t total = 0;
    for (const Step& s : tree.steps()) total += s.end - s.ts;
    return total / static_cast<int64_t>(tree.steps().size());
  }
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (EventId e = 0; e < t.size(); ++e) {
    if (t.phase[e] != Phase::Complete) continue;
    lo = std::min(lo, t.ts[e]);
    hi = std::max(hi, t.end(e));
  }
  return hi > lo ? hi - lo : 0;
}

}  // namespace

struct RuleEngine::Impl {
  Impl(const Trace& t, const EventTree& tree) : index(t, tree), reference(reference_span(t, tree)) {}
  rules::RuleIndex index;
  int64_t reference;  // a mean step, or the profiled span without steps (ns)
};

RuleEngine::RuleEngine(const Trace& trace, const EventTree& tree) : impl_(std::make_unique<Impl>(trace, tree)) {}
RuleEngine::~RuleEngine() = default;
RuleEngine::RuleEngine(RuleEngine&&) noexcept = default;

std::vector<RuleFinding> RuleEngine::detect(int64_t begin, int64_t end) const {
  if (end <= begin) return {};
  rules::DetectorOutput out;
  for (rules::Detector d : kDetectors) {
    if (d == rules::detect_gpu_idle) out.explained_idle = merge_intervals(std::move(out.explained_idle));
    d(impl_->index, begin, end, out);
  }
  const double span = static_cast<double>(end - begin);
  std::vector<int64_t> inside;  // each finding's cost inside the range, in out.findings' order
  for (RuleFinding& f : out.findings) {
    f.confidence = std::clamp(f.confidence, 0.0, 1.0);
    // The detectors print frame and op names as recorded; a pybind built-in's carries the
    // object's address ("<built-in method _record_function_enter_new of ... object at
    // 0x7f6078438030>", tracelens_vllm_piecewise_capture's cpu_bound_step), which changes
    // every run: users cannot read it, and --baseline and SARIF would not match the line.
    for (std::string& line : f.evidence) line = without_addresses(line);
    f.fix = without_addresses(f.fix);
    // Judged on the cost inside the range, the one the report shows for it: a pattern that
    // runs on past the window's edges must not outrank what the window itself holds.
    const auto [f_begin, f_end] = cost_extent(f);
    const int64_t here = cost_inside(f.cost, f_begin, f_end, begin, end);
    const double share = static_cast<double>(here) / span;
    f.severity = severity_for_share(share);
    if (static_cast<double>(here) < kMinStepShare * static_cast<double>(impl_->reference)) f.severity = Severity::info;
    // Capture runs once, before the steady state it warms up: information, whatever it costs.
    // A rule may know it already: calls made while a graph is set up or recorded (host_sync,
    // alloc_churn) whose idle runs on past the capture's calls.
    f.one_time = f.one_time || cost_in_graph_capture(impl_->index, f);
    if (f.one_time) f.severity = Severity::info;
    inside.push_back(here);
  }
  // named_before's order, with the cost inside the range ranking findings of one severity.
  std::vector<size_t> order(out.findings.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const RuleFinding &fa = out.findings[a], &fb = out.findings[b];
    if (fa.severity != fb.severity) return fa.severity > fb.severity;
    if (inside[a] != inside[b]) return inside[a] > inside[b];
    return fa.confidence > fb.confidence;
  });
  std::vector<RuleFinding> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) sorted.push_back(std::move(out.findings[i]));
  return sorted;
}

std::vector<double> RuleEngine::scores(const std::vector<std::pair<int64_t, int64_t>>& ranges) const {
  std::vector<double> s;
  s.reserve(ranges.size());
  for (auto [b, e] : ranges) {
    double best = 0;
    const double span = static_cast<double>(std::max<int64_t>(1, e - b));
    for (const RuleFinding& f : detect(b, e))
      best = std::max(best, f.confidence * (1.0 - std::exp(-kCostWeight * static_cast<double>(f.cost) / span)));
    s.push_back(best);
  }
  return s;
}

}  // namespace ttap
