#include "ttap/collectives_report.hpp"

#include <fmt/format.h>

namespace ttap {

std::vector<Table> collectives_tables(const CollectiveReport& r) {
  auto us = [](double ns) { return ns / 1e3; };
  Table groups{"collectives", "Collectives by type and size (aligned across ranks)",
               {{"type"}, {"algorithm"}, {"size"}, {"ranks"}, {"calls"}, {"kernel us", 1}, {"skew us", 1}, {"transfer us", 1},
                {"algbw GB/s", 2}, {"busbw GB/s", 2}},
               {}, {}, 0};
  for (const auto& g : r.groups)
    groups.rows.push_back({g.type, g.algorithm, g.bytes >= 0 ? Cell{fmt::format("{:.3f} MB", static_cast<double>(g.bytes) / 1e6)} : Cell{std::string("unknown")},
                           int64_t{g.ranks}, g.calls, us(g.mean_duration), us(g.mean_skew), us(g.mean_transfer),
                           g.bytes > 0 ? Cell{g.algbw_gbs} : Cell{}, g.bytes > 0 ? Cell{g.busbw_gbs} : Cell{}});
  groups.note =
      "kernel: the collective kernel's duration, averaged over ranks; skew: last rank's start minus the first's; transfer: "
      "first completion minus last start, the time all ranks were in the collective. Sizes need record_param_comms "
      "metadata (PyTorch 2.1+).";
  for (const auto& w : r.warnings) groups.note += "\nwarning: " + w;
  Table ranks{"ranks", "Ranks, stragglers first",
              {{"rank"}, {"last to arrive"}, {"others waited ms", 3}, {"waited ms", 3}}, {}, {}, 0};
  for (const auto& w : r.ranks)
    ranks.rows.push_back({int64_t{w.rank}, w.last_arrivals, static_cast<double>(w.others_waited) / 1e6, static_cast<double>(w.waited) / 1e6});
  return {std::move(groups), std::move(ranks)};
}

}  // namespace ttap
