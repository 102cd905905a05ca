// torch.compile in the steady state: several compiled regions per step with eager ops
// between them (graph breaks), and TorchDynamo compiling after warm-up (recompilation).
#include <fmt/format.h>

#include <map>

#include "rule_index.hpp"

namespace ttap::rules {

namespace {

// Graph breaks seen in the range: 1 fires, 8 are certain.
constexpr double kBreakFire = 1;
constexpr double kBreakStrong = 8;
// Confidence when TorchDynamo compiles after warm-up: recompilation is unambiguous.
constexpr double kRecompileConfidence = 0.9;

}  // namespace

void detect_graph_breaks(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  // A break shows between two regions, which may lie outside a short range: take every
  // region by thread and keep the pairs whose eager stretch overlaps the range.
  std::map<TrackId, std::vector<EventId>> regions;  // by thread, by start
  for (EventId r : ix.compiled.events) regions[t.track[r]].push_back(r);
  std::vector<EventId> recompiles;
  int64_t compile_time = 0;
  ix.dynamo.each_overlapping(t, begin, end, [&](EventId d) {
    if (t.ts[d] < begin || !ix.after_warmup(d)) return;
    // Nested compile frames: count the outermost only.
    if (!recompiles.empty() && t.ts[d] < t.end(recompiles.back())) return;
    recompiles.push_back(d);
    compile_time += t.dur[d];
  });

  RuleFinding f;
  size_t breaks = 0, region_count = 0, eager_kernels = 0;
  int64_t eager_time = 0;
  std::map<std::string, int> eager_ops;
  std::string region_name;
  for (auto& [track, rs] : regions) {
    for (size_t i = 1; i < rs.size(); ++i) {
      const EventId a = rs[i - 1], b = rs[i];
      if (ix.tree.step_of(a) != ix.tree.step_of(b) || t.end(a) > t.ts[b]) continue;
      if (overlap(t.end(a), t.ts[b], begin, end) == 0 && !(t.end(a) == t.ts[b] && t.ts[b] >= begin && t.ts[b] < end))
        continue;
      // Eager work between two regions of one step: kernels launched from this thread.
      size_t launched = 0;
      auto [lo, hi] = ix.launch_range(t.end(a), t.ts[b]);
      for (size_t k = lo; k < hi; ++k) {
        const EventId g = ix.gpu[ix.launch_gpu[k]];
        if (t.track[ix.tree.launcher(g)] != track) continue;
        ++launched;
        const EventId op = ix.tree.owner_op(g);
        if (op != kNoEvent) ++eager_ops[std::string(t.name_of(op))];
      }
      if (launched == 0) continue;
      ++breaks;
      region_count += 2;
      if (region_name.empty()) region_name = std::string(t.name_of(a));
      eager_kernels += launched;
      eager_time += t.ts[b] - t.end(a);
      f.spans.emplace_back(t.end(a), t.ts[b]);
      if (f.events.size() < 64) f.events.push_back(b);
    }
  }
  if (breaks == 0 && recompiles.empty()) return;
  f.id = "graph_breaks";
  f.confidence = breaks > 0 ? confidence_between(static_cast<double>(breaks), kBreakFire, kBreakStrong) : 0;
  if (!recompiles.empty()) f.confidence = std::max(f.confidence, kRecompileConfidence);
  // Upper bound: the eager stretches between regions and the compile time itself.
  f.cost = eager_time + compile_time;
  f.events.insert(f.events.begin(), recompiles.begin(), recompiles.end());
  for (EventId d : recompiles) f.spans.emplace_back(t.ts[d], t.end(d));
  std::sort(f.spans.begin(), f.spans.end());
  set_span(t, f);  // the eager stretches and compiles, not the regions after the breaks
  std::vector<std::pair<int, std::string>> ops;
  for (auto& [k, n] : eager_ops) ops.emplace_back(n, k);
  std::sort(ops.rbegin(), ops.rend());
  std::string top;
  for (size_t i = 0; i < ops.size() && i < 3; ++i) top += fmt::format("{}{} x{}", i ? ", " : "", ops[i].second, ops[i].first);
  if (breaks > 0) {
    const size_t steps = std::max<size_t>(1, ix.tree.steps().size());
    f.evidence.push_back(fmt::format("{} (e.g. {}) around the range with eager work between them {}: {} launched eagerly "
                                     "over {}",
                                     count_text(region_count, "compiled region"), region_name, count_text(breaks, "time"),
                                     count_text(eager_kernels, "kernel"), dur_text(eager_time)));
    if (!top.empty()) f.evidence.push_back("eager ops between regions: " + top);
    (void)steps;
  }
  if (!recompiles.empty())
    f.evidence.push_back(fmt::format("TorchDynamo compiles {} after warm-up ({}): {}", count_text(recompiles.size(), "time"),
                                     dur_text(compile_time), t.name_of(recompiles.front())));
  f.locations = user_locations(ix, f.events);
  const std::string where =
      f.locations.empty() ? "" : fmt::format(" around {}:{}", f.locations[0].file, f.locations[0].line);
  f.fix = !recompiles.empty() && breaks == 0
              ? fmt::format("stop recompiling{}: find the failing guard with TORCH_LOGS=recompiles, mark varying dims "
                            "dynamic (torch._dynamo.mark_dynamic) or pad shapes to a few sizes",
                            where)
              : fmt::format("remove the graph breaks{}: list them with TORCH_LOGS=graph_breaks or "
                            "torch._dynamo.explain, then replace the data-dependent control flow, .item() calls or "
                            "unsupported ops{} so the step compiles as one graph",
                            where, ops.empty() ? "" : fmt::format(" ({} runs eagerly)", ops[0].second));
  out.findings.push_back(std::move(f));
}

}  // namespace ttap::rules
