// The GPU idle gaps that end as soon as a freshly launched kernel arrives (the GPU waited
// for the host to launch it), and which of them a pattern's own launches caused: a window
// looks launch-bound on a fast GPU whatever the host is launching, and when the kernels it
// waits for are dtype casts, layout copies or the links of an elementwise chain, that
// pattern is the cause and takes the idle as its cost (launch_bound keeps the rest).
#include <algorithm>
#include <functional>
#include <span>

#include <fmt/format.h>

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

namespace {
// The op a kernel's launch is made in, at the top of its thread's op stack (aten::to above
// _to_copy above copy_ for a cast): where the host's work for that kernel begins and ends.
EventId outermost_op(const RuleIndex& ix, EventId op) {
  if (op == kNoEvent) return kNoEvent;
  for (EventId p = ix.tree.parent(op); p != kNoEvent && ix.t.category[p] == Category::CpuOp; p = ix.tree.parent(p)) op = p;
  return op;
}

// Whether a long gap lies between two of the pattern's own launches with nothing profiled
// on the launching thread between their ops: the kernel the gap follows is the pattern's
// too, and the host went from one of its calls to the next without any other op. It was in
// the loop's own code (Python between two casts of a loop over the weights), so the loop
// kept the GPU waiting (gpuzoo_0011: 554 us with nothing recorded between two of a
// weight-recasting loop's aten::to).
bool between_own_launches(const RuleIndex& ix, const LaunchGap& g, const std::function<bool(size_t)>& caused) {
  const Trace& t = ix.t;
  const EventId next = ix.gpu[g.next];
  const int64_t gap_begin = t.ts[next] - g.whole;
  size_t prev = g.next;
  for (size_t k = g.next, seen = 0; k-- > 0 && seen < 64; ++seen) {
    const EventId p = ix.gpu[k];
    if (!ix.on_primary(p) || t.end(p) > gap_begin) continue;
    if (t.end(p) == gap_begin) prev = k;
    break;
  }
  if (prev == g.next || ix.gpu_in_optimizer[prev] || !caused(prev)) return false;
  const EventId a = outermost_op(ix, ix.tree.owner_op(ix.gpu[prev])), b = outermost_op(ix, ix.tree.owner_op(next));
  if (a == kNoEvent || b == kNoEvent || a == b || t.track[a] != t.track[b] || t.end(a) >= t.ts[b]) return false;
  // Every event the thread recorded between the two ops must be one that holds either of them
  // (the loop's frame, the call of the next cast): any other (an op, or with with_stack a
  // Python frame: the model's next module being set up) is the host somewhere else. Such an
  // event lies under one of those holders, or is a root of the thread, so their children and
  // the roots are what to look through.
  std::vector<EventId> holders;
  for (EventId x : {a, b})
    for (EventId p = x; p != kNoEvent; p = ix.tree.parent(p)) holders.push_back(p);
  const auto held = [&](EventId e) { return std::find(holders.begin(), holders.end(), e) != holders.end(); };
  const int64_t from = t.end(a), to = t.ts[b];
  const auto other_in = [&](std::span<const EventId> events) {
    return std::any_of(events.begin(), events.end(), [&](EventId e) {
      return !held(e) && !is_gpu_activity(t.category[e]) && t.ts[e] < to && t.end(e) > from;
    });
  };
  if (t.track[a] < ix.tree.roots_by_track().size() && other_in(ix.tree.roots_by_track()[t.track[a]])) return false;
  for (EventId h : holders)
    if (other_in(ix.tree.children(h))) return false;
  return true;
}
}  // namespace

std::vector<Interval> gaps_caused_by(const RuleIndex& ix, const std::vector<LaunchGap>& gaps, const DetectorOutput& out,
                                     const std::function<bool(size_t)>& caused, std::vector<Interval>* between) {
  const std::vector<Interval>& claimed = out.caused_launch_gaps;
  std::vector<Interval> ivs;
  for (const LaunchGap& g : gaps) {
    if (!caused(g.next) || std::find(claimed.begin(), claimed.end(), Interval{g.begin, g.end}) != claimed.end()) continue;
    // A long gap is the pattern's only when the host spent it in the op that launched the
    // arriving kernel (a 0.8 ms layout copy's call), not elsewhere (a DataLoader fetch) with
    // the pattern's kernel merely next in line.
    // Or when it lies between two of the pattern's launches with nothing else profiled on
    // the host (between_own_launches).
    if (g.whole >= kLongGap) {
      const EventId op = ix.tree.owner_op(ix.gpu[g.next]);
      const bool in_op = op != kNoEvent && 2 * overlap(ix.t.ts[op], ix.t.end(op), g.begin, g.end) >= g.end - g.begin;
      if (!in_op) {
        if (!between_own_launches(ix, g, caused)) continue;
        if (between) between->emplace_back(g.begin, g.end);
      }
    }
    ivs.emplace_back(g.begin, g.end);
  }
  return ivs;
}

std::string between_launches_text(const std::vector<Interval>& between, std::string_view what) {
  if (between.empty()) return "";
  return fmt::format("{} of that idle in {} of at least {} between two of these {} with nothing else recorded on the "
                     "host between their calls: the host runs code the profiler does not record (Python) between them while the "
                     "GPU waits",
                     dur_text(idle_of(between)), count_text(between.size(), "gap"), dur_text(kLongGap), what);
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
