// The GPU idle gaps that end as soon as a freshly launched kernel arrives (the GPU waited
// for the host to launch it), and which of them a pattern's own launches caused: a window
// looks launch-bound on a fast GPU whatever the host is launching, and when the kernels it
// waits for are dtype casts, layout copies or the links of an elementwise chain, that
// pattern is the cause and takes the idle as its cost (launch_bound keeps the rest).
#include <algorithm>
#include <functional>

#include "rule_index.hpp"

namespace ttap::rules {

std::vector<LaunchGap> launch_gaps(const RuleIndex& ix, int64_t begin, int64_t end, bool past_end) {
  const Trace& t = ix.t;
  std::vector<LaunchGap> gaps;
  for (auto [gb, e] : ix.whole_idle_gaps(begin, end)) {
    if (e >= end && !past_end) continue;  // what ends it lies past the range
    auto [k, kend] = ix.gpu_range(e, e + 1);
    for (; k < kend; ++k) {
      const EventId g = ix.gpu[k];
      const EventId l = ix.tree.launcher(g);
      if (!ix.on_primary(g) || l == kNoEvent) continue;
      // A kernel that starts within the idle-queue latency (plus slack) of its launch found
      // the queue empty: the GPU was waiting for it; so was it for one launched during a
      // stall-sized gap (the queue had long run dry).
      const bool fresh = t.ts[g] - t.ts[l] <= ix.launch_latency + kEmptyQueueSlack || (e - gb >= kLongGap && t.ts[l] >= gb);
      if (!ix.gpu_in_optimizer[k] && fresh)
        gaps.push_back({std::max(gb, begin), std::min(e, end), e - gb, k});
      break;
    }
  }
  return gaps;
}

std::vector<Interval> gaps_caused_by(const RuleIndex& ix, const std::vector<LaunchGap>& gaps, const DetectorOutput& out,
                                     const std::function<bool(size_t)>& caused) {
  const std::vector<Interval>& claimed = out.caused_launch_gaps;
  std::vector<Interval> ivs;
  for (const LaunchGap& g : gaps) {
    if (!caused(g.next) || std::find(claimed.begin(), claimed.end(), Interval{g.begin, g.end}) != claimed.end()) continue;
    // A long gap is the pattern's only when the host spent it in the op that launched the
    // arriving kernel (a 0.8 ms layout copy's call), not elsewhere (a DataLoader fetch) with
    // the pattern's kernel merely next in line.
    if (g.whole >= kLongGap) {
      const EventId op = ix.tree.owner_op(ix.gpu[g.next]);
      if (op == kNoEvent || 2 * overlap(ix.t.ts[op], ix.t.end(op), g.begin, g.end) < g.end - g.begin) continue;
    }
    ivs.emplace_back(g.begin, g.end);
  }
  return ivs;
}

int64_t idle_of(const std::vector<Interval>& ivs) {
  int64_t idle = 0;
  for (auto [b, e] : ivs) idle += e - b;
  return idle;
}

std::vector<EventId> kernels_ending(const RuleIndex& ix, const std::vector<LaunchGap>& gaps, const std::vector<Interval>& ivs) {
  std::vector<EventId> kernels;
  for (const LaunchGap& g : gaps)
    if (std::find(ivs.begin(), ivs.end(), Interval{g.begin, g.end}) != ivs.end()) kernels.push_back(ix.gpu[g.next]);
  return kernels;
}

void claim_launch_gaps(const std::vector<Interval>& ivs, DetectorOutput& out) {
  out.explained_idle.insert(out.explained_idle.end(), ivs.begin(), ivs.end());
  out.caused_launch_gaps.insert(out.caused_launch_gaps.end(), ivs.begin(), ivs.end());
}

}  // namespace ttap::rules
