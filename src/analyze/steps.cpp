// Per-step figures: how long each ProfilerStep took and what share of it the GPU was busy,
// the input pipeline ran, and copies ran.
#include "ttap/analyze.hpp"

namespace ttap {

bool is_dataloader_event(std::string_view name) {
  // enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__ and the multi-process twin.
  return name.find("DataLoader") != std::string_view::npos && name.find("__next__") != std::string_view::npos;
}

std::vector<StepRow> step_breakdown(const Trace& t, const EventTree& tree) {
  std::vector<StepRow> rows;
  if (tree.steps().empty()) return rows;
  std::vector<Interval> busy, copies;
  for (EventId g : tree.gpu_events()) {
    busy.emplace_back(t.ts[g], t.end(g));
    if (t.category[g] == Category::GpuMemcpy) copies.emplace_back(t.ts[g], t.end(g));
  }
  busy = merge_intervals(std::move(busy));
  copies = merge_intervals(std::move(copies));
  std::vector<std::vector<Interval>> loader(tree.steps().size());
  std::vector<int64_t> kernels(tree.steps().size(), 0);
  NameClassifier names(t);
  for (EventId e = 0; e < t.size(); ++e) {
    const int32_t s = tree.step_of(e);
    if (s < 0) continue;
    if (is_gpu_activity(t.category[e])) {
      ++kernels[s];
    } else if (tree.in_tree(e) && names.dataloader(t.name[e])) {
      loader[s].emplace_back(t.ts[e], t.end(e));
    }
  }
  for (size_t i = 0; i < tree.steps().size(); ++i) {
    const Step& step = tree.steps()[i];
    StepRow r;
    r.number = step.number;
    r.duration = step.end - step.ts;
    r.gpu_busy = clipped_length(busy, step.ts, step.end);
    r.memcpy = clipped_length(copies, step.ts, step.end);
    r.dataloader = total_length(merge_intervals(std::move(loader[i])));
    r.kernels = kernels[i];
    rows.push_back(r);
  }
  return rows;
}

}  // namespace ttap
