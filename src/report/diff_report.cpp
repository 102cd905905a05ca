#include "ttap/diff_report.hpp"

#include <cstdlib>

#include <fmt/format.h>

namespace ttap {

namespace {

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }
double pct(double delta, double base) { return base > 0 ? 100.0 * delta / base : 0.0; }

void cut(Table& t, size_t top) {
  t.total_rows = t.rows.size();
  if (top > 0 && t.rows.size() > top) t.rows.resize(top);
}

Table delta_table(std::string id, std::string title, std::string key_name, const std::vector<DeltaRow>& rows, size_t top) {
  Table t{std::move(id), std::move(title),
          {{std::move(key_name)}, {"base count"}, {"new count"}, {"base ms", 3}, {"new ms", 3}, {"delta ms", 3}, {"delta %", 1}},
          {}, {}, 0};
  for (const auto& r : rows)
    t.rows.push_back({r.key, r.base_count, r.new_count, ms(r.base_time), ms(r.new_time), ms(r.delta()),
                      r.base_time > 0 ? Cell{pct(static_cast<double>(r.delta()), static_cast<double>(r.base_time))} : Cell{}});
  cut(t, top);
  return t;
}

}  // namespace

std::vector<Table> diff_tables(const TraceDiff& d, size_t top) {
  std::vector<Table> tables;
  Table gates{"gates", "Regression gates", {{"metric"}, {"base"}, {"new"}, {"delta %", 1}, {"verdict"}}, {}, {}, 0};
  for (const auto& g : d.gates) {
    const bool memory = g.metric.find("memory") != std::string::npos;
    auto show = [&](double v, bool missing) {
      if (missing) return std::string("n/a");
      return memory ? fmt::format("{:.1f} MB", v / 1e6) : fmt::format("{:.3f} ms", v / 1e6);
    };
    const bool missing = g.base_missing || g.new_missing;
    gates.rows.push_back({g.metric, show(g.base, g.base_missing), show(g.next, g.new_missing), missing ? Cell{} : Cell{g.delta_pct},
                          std::string(g.regressed ? "REGRESSION"
                                      : missing   ? (g.base_missing ? "n/a (none in base)" : "n/a (none in new)")
                                                  : "ok")});
  }
  tables.push_back(std::move(gates));

  tables.push_back(delta_table("steps", "Steps (aligned by order)", "step", d.steps, 0));

  // Each side's device as that side names it: GPU 0 of one run need not be the other's GPU 0.
  Table tl{"gpu_timeline", "GPU timeline, side by side",
           {{"base device"}, {"new device"}, {"type"}, {"base ms", 3}, {"new ms", 3}, {"delta ms", 3}}, {}, {}, 0};
  for (size_t i = 0; i < std::max(d.base_timeline.size(), d.new_timeline.size()); ++i) {
    const GpuTimeline b = i < d.base_timeline.size() ? d.base_timeline[i] : GpuTimeline{};
    const GpuTimeline n = i < d.new_timeline.size() ? d.new_timeline[i] : GpuTimeline{};
    const std::pair<const char*, std::pair<int64_t, int64_t>> rows[] = {
        {"computation_time", {b.computation, n.computation}}, {"exposed_comm_time", {b.exposed_communication, n.exposed_communication}},
        {"exposed_memcpy_time", {b.exposed_memcpy, n.exposed_memcpy}}, {"busy_time", {b.busy, n.busy}},
        {"idle_time", {b.idle, n.idle}}, {"total_time", {b.total, n.total}}};
    const std::string bdev = i < d.base_devices.size() ? d.base_devices[i] : "-";
    const std::string ndev = i < d.new_devices.size() ? d.new_devices[i] : "-";
    for (const auto& [name, v] : rows)
      tl.rows.push_back({bdev, ndev, std::string(name), ms(v.first), ms(v.second), ms(v.second - v.first)});
  }
  tables.push_back(std::move(tl));
  tables.push_back(delta_table("ops_by_category", "GPU time by op category", "op category", d.categories, 0));
  tables.push_back(delta_table("ops", "CPU time by op (over the aligned steps), by impact", "op", d.ops, top));
  tables.push_back(delta_table("kernels", "GPU time by kernel (over the aligned steps), by impact", "kernel", d.kernels, top));

  Table tree{"tree_changes", "Where the trees differ (at the lowest common ancestor), by impact",
             {{"at"}, {"op"}, {"change"}, {"times"}, {"delta ms", 3}}, {}, {}, 0};
  for (const auto& c : d.tree) tree.rows.push_back({c.path, c.name, c.kind, c.occurrences, ms(c.delta)});
  cut(tree, top);
  tables.push_back(std::move(tree));
  return tables;
}

std::string diff_verdict(const TraceDiff& d, double threshold_pct) {
  std::string worse;
  for (const auto& g : d.gates)
    if (g.regressed) worse += fmt::format("{}{} {:+.1f}%", worse.empty() ? "" : ", ", g.metric, g.delta_pct);
  if (worse.empty()) return fmt::format("no regression above {:g}%", threshold_pct);
  std::string out = fmt::format("REGRESSION above {:g}%: {}", threshold_pct, worse);
  for (const auto& c : d.top_contributors) out += fmt::format("\n  top contributor: {}", c);
  return out;
}

}  // namespace ttap
