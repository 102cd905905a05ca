// `ttap analyze`: for now the trace's headline figures (GPU timeline, where GPU time goes,
// steps, launches). Window scoring and anti-pattern classification are later stages.
#include <fmt/format.h>

#include "commands.hpp"
#include "ttap/analyze.hpp"
#include "ttap/table.hpp"
#include "ttap/whatif.hpp"

namespace ttap::cli {

namespace {

double pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0; }

std::string headline_text(const Trace& t, const EventTree& tree) {
  std::string out = fmt::format("{}\n", t.source);
  const auto timelines = gpu_timeline(t, tree);
  if (timelines.empty()) out += "  no GPU activity (CPU-only trace)\n";
  for (const auto& g : timelines) {
    out += fmt::format("  GPU {}: busy {:.1f}% of {:.3f} ms (compute {:.1f}%, exposed comm {:.1f}%, exposed memcpy {:.1f}%), idle {:.3f} ms\n",
                       g.device, pct(g.busy, g.total), static_cast<double>(g.total) / 1e6, pct(g.computation, g.total),
                       pct(g.exposed_communication, g.total), pct(g.exposed_memcpy, g.total), static_cast<double>(g.idle) / 1e6);
  }
  const auto cats = category_breakdown(t, tree);
  int64_t total = 0;
  for (const auto& c : cats) total += c.kernel_time;
  std::string top;
  for (size_t i = 0; i < cats.size() && i < 4; ++i)
    top += fmt::format("{}{} {:.1f}%", i ? ", " : "", op_category_name(cats[i].category), pct(cats[i].kernel_time, total));
  if (!top.empty()) out += fmt::format("  GPU time by category: {}\n", top);
  const auto steps = step_breakdown(t, tree);
  if (!steps.empty()) {
    int64_t dur = 0, busy = 0, loader = 0;
    for (const auto& s : steps) {
      dur += s.duration;
      busy += s.gpu_busy;
      loader += s.dataloader;
    }
    out += fmt::format("  {} steps, mean {:.3f} ms: GPU busy {:.1f}%, DataLoader {:.1f}% of step time\n", steps.size(),
                       static_cast<double>(dur) / 1e6 / static_cast<double>(steps.size()), pct(busy, dur), pct(loader, dur));
  }
  const LaunchStats ls = launch_stats(t, tree);
  if (ls.launches > 0)
    out += fmt::format("  {} launches: {:.1f}% of kernels shorter than their launch call; launch delay p50 {:.1f} us, p95 {:.1f} us\n",
                       ls.launches, pct(ls.short_kernels, ls.launches), static_cast<double>(ls.launch_delay_p50) / 1e3,
                       static_cast<double>(ls.launch_delay_p95) / 1e3);
  for (const WhatIf& w : whatif_all(t, tree)) {
    if (w.step_share < 0.01) continue;
    out += fmt::format("  what-if {}: {} would save ~{:.3f} ms per step ({:.1f}%)\n", w.id, w.fix,
                       static_cast<double>(w.saved_per_step) / 1e6, 100.0 * w.step_share);
  }
  return out;
}

}  // namespace

int run_analyze(const AnalyzeOptions& o) {
  std::string out;
  for (const auto& path : o.traces) {
    Loaded l = load_and_build(path);
    out += headline_text(l.trace, l.tree);
  }
  out += "(anti-pattern detection is not in this build yet: see `ttap summary` for the full breakdown)\n";
  write_output(o.output, out);
  return kOk;
}

}  // namespace ttap::cli
