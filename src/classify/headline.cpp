// The figures every analyze report leads with: the GPU timeline, where GPU time goes,
// steps, launches, and the what-if estimates. Computed from analyze.hpp and whatif.hpp.
#include <algorithm>

#include "classify.hpp"
#include "ttap/analyze.hpp"
#include "ttap/whatif.hpp"

namespace ttap {

namespace {

double share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

Headline make_headline(const Trace& trace, const EventTree& tree) {
  Headline h;
  // Over the CPU-side steps when there are any: the step the user waits for, and the span
  // the steps line below reports; a GPU-side annotation may cover only the part of the
  // step that ran on the GPU (99% busy there, 41% of the step). Else TraceLens's scope.
  std::vector<GpuTimeline> timeline;
  if (!tree.steps().empty()) {
    int64_t begin = INT64_MAX, end = INT64_MIN;
    for (const Step& s : tree.steps()) begin = std::min(begin, s.ts), end = std::max(end, s.end);
    timeline = gpu_timeline(trace, tree, begin, end);
  } else {
    timeline = gpu_timeline(trace, tree);
  }
  for (const GpuTimeline& g : timeline)
    h.gpus.push_back({g.device, g.total, g.busy, g.idle, g.computation, g.exposed_communication, g.exposed_memcpy,
                      !tree.steps().empty() ? "steps" : g.from_steps ? "gpu_step_annotations" : "gpu_activity"});
  const auto categories = category_breakdown(trace, tree);
  int64_t kernel_time = 0;
  for (const auto& c : categories) kernel_time += c.kernel_time;
  // The four largest are what a person reads; the rest is in `ttap summary`.
  for (size_t i = 0; i < categories.size() && i < 4; ++i)
    h.categories.push_back({std::string(op_category_name(categories[i].category)), share(categories[i].kernel_time, kernel_time)});
  const auto steps = step_breakdown(trace, tree);
  if (!steps.empty()) {
    int64_t duration = 0, busy = 0, loader = 0;
    for (const auto& s : steps) {
      duration += s.duration;
      busy += s.gpu_busy;
      loader += s.dataloader;
    }
    h.steps = static_cast<int64_t>(steps.size());
    h.step_mean = duration / h.steps;
    h.step_gpu_busy = share(busy, duration);
    h.step_dataloader = share(loader, duration);
  }
  const LaunchStats ls = launch_stats(trace, tree);
  h.launches = ls.launches;
  // A share of the kernels, as the headline reads it ("% of kernels shorter than their launch
  // call"): copies and memsets are launched too but are never counted short (929 launches, 768
  // of them kernels, on tracelens_vllm_b200_eager: 53.8% of launches, 65.1% of kernels).
  h.short_kernel_share = share(ls.short_kernels, ls.kernel_launches);
  h.launch_delay_p50 = ls.launch_delay_p50;
  h.launch_delay_p95 = ls.launch_delay_p95;
  // The loader keeps one Python-args row per python_function event, so the table's size is
  // their count, without a pass over every event.
  h.python_functions = static_cast<int64_t>(trace.python_args.size());
  if (const auto tracer = python_tracer_cost(trace, tree)) {
    h.python_tracer_per_step = tracer->per_step;
    h.python_tracer_per_event = tracer->per_event;
    h.python_functions_per_step = tracer->events_per_step;
    h.python_tracer_calls_timed = tracer->calls_timed;
  }
  return h;
}

std::vector<Saving> make_savings(const Trace& trace, const EventTree& tree) {
  std::vector<Saving> out;
  for (const WhatIf& w : whatif_all(trace, tree))
    out.push_back({w.id, w.fix, w.saved_per_step, w.step_share, w.model, w.per_step, w.bound, w.frame});
  return out;
}

void leave_round_trips_unpinned(std::vector<Saving>& savings, const std::vector<RuleFinding>& across,
                                const Trace& trace, const EventTree& tree) {
  const auto pingpong = std::find_if(across.begin(), across.end(), [](const RuleFinding& f) { return f.id == "offload_pingpong"; });
  const auto pinned = std::find_if(savings.begin(), savings.end(), [](const Saving& s) { return s.id == "pageable_memcpy"; });
  if (pingpong == across.end() || pinned == savings.end()) return;
  const WhatIf w = whatif_pageable_memcpy(trace, tree, pingpong->events);
  if (w.saved_per_step <= 0) {
    savings.erase(pinned);
    return;
  }
  *pinned = {w.id, w.fix, w.saved_per_step, w.step_share, w.model, w.per_step, w.bound, w.frame};
  std::stable_sort(savings.begin(), savings.end(), [](const Saving& a, const Saving& b) { return a.saved_per_step > b.saved_per_step; });
}

std::optional<Saving> recoverable(const std::vector<Saving>& savings) {
  if (savings.size() < 2) return std::nullopt;
  Saving all{"all", "every fix above", 0, 0,
             "the estimates added up (they overlap, so an upper bound) and capped by what the step could lose", true,
             INT64_MAX, 0};
  int64_t largest = 0;
  for (const Saving& s : savings) {
    all.saved_per_step += s.saved_per_step;
    largest = std::max(largest, s.saved_per_step);
    // The tightest bound is the step time beyond all of its GPU work; an estimate that takes
    // GPU work off the critical path (overlapped collectives) may alone save more than that.
    all.bound = std::min(all.bound, s.bound);
    all.frame = s.frame;
    all.per_step = s.per_step;
  }
  all.bound = std::max(all.bound, largest);
  all.saved_per_step = std::min(all.saved_per_step, all.bound);
  all.step_share = share(all.saved_per_step, all.frame);
  return all;
}

std::vector<double> gpu_busy_shares(const Trace& trace, const EventTree& tree,
                                    const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  std::vector<Interval> busy;
  busy.reserve(tree.gpu_events().size());
  for (EventId e : tree.gpu_events()) busy.emplace_back(trace.ts[e], trace.end(e));
  const std::vector<Interval> merged = merge_intervals(std::move(busy));
  std::vector<double> out;
  out.reserve(ranges.size());
  for (const auto& [begin, end] : ranges) out.push_back(share(clipped_length(merged, begin, end), end - begin));
  return out;
}

}  // namespace ttap
