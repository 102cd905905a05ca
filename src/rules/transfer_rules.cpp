// Host/device and device/device copies: pageable_memcpy, small_transfers,
// offload_pingpong, redundant_copy.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "rule_index.hpp"

namespace ttap::rules {

namespace {

// Below this a copy is "small": its launch and sync cost more than the bytes (the catalog's
// ~64 KB).
constexpr int64_t kSmallCopyBytes = 64 * 1024;
// At or above this a copy moves real working-set data (offload, clones).
constexpr int64_t kLargeCopyBytes = 1 << 20;

enum class Dir { HtoD, DtoH, DtoD, other };
Dir direction(std::string_view n) {
  if (n.find("HtoD") != std::string_view::npos) return Dir::HtoD;
  if (n.find("DtoH") != std::string_view::npos) return Dir::DtoH;
  if (n.find("DtoD") != std::string_view::npos) return Dir::DtoD;
  return Dir::other;
}

int64_t bytes_of(const Trace& t, EventId g) {
  const CopyArgs* c = t.copy(g);
  return c == nullptr ? -1 : c->bytes;
}

// A copy small_transfers counts: host to device or back, under kSmallCopyBytes.
bool is_small_host_copy(const Trace& t, EventId g) {
  const Dir d = direction(t.name_of(g));
  const int64_t b = bytes_of(t, g);
  return (d == Dir::HtoD || d == Dir::DtoH) && b >= 0 && b < kSmallCopyBytes;
}

// Copies of the primary device that start in [b, e).
std::vector<EventId> copies_in(const RuleIndex& ix, int64_t b, int64_t e) {
  std::vector<EventId> v;
  auto [lo, hi] = ix.gpu_range(b, e);
  for (size_t i = lo; i < hi; ++i)
    if (ix.t.category[ix.gpu[i]] == Category::GpuMemcpy && ix.on_primary(ix.gpu[i])) v.push_back(ix.gpu[i]);
  return v;
}

// Copies judged for a range: those that start in it, and those whose launching call
// overlaps it (a pageable upload whose host call began before the window, or whose copy
// runs after it, is the window's as much as its own).
std::vector<EventId> copies_judged(const RuleIndex& ix, int64_t b, int64_t e) {
  std::vector<EventId> v = copies_in(ix, b, e);
  ix.memcpy_calls.each_overlapping(ix.t, b, e, [&](EventId call) {
    for (EventId g : ix.tree.children(call))
      if (ix.t.category[g] == Category::GpuMemcpy && ix.on_primary(g) && (ix.t.ts[g] < b || ix.t.ts[g] >= e))
        v.push_back(g);
  });
  return v;
}

// Host time of a copy within [b, e): the span of its enclosing op (aten::copy_ waits for a
// pageable copy and its stream sync), else of the launching call, split into the op's own
// time and the time it waits behind the launch queue: from the launch call until the copy
// starts on the GPU, beyond the idle-queue latency, when the GPU works meanwhile. A 704-byte copy
// whose aten::copy_ takes 146 ms because 146 ms of kernels were queued ahead of it is a sync
// on that queue (host_sync reports it), not 146 ms of small-transfer cost; a large pageable
// upload's wait is its own (pinned and non_blocking, it would not wait). A late start on a
// GPU that does nothing meanwhile is no queue: a 4-byte pageable upload on an H200 starts
// 237 us after its cudaMemcpyAsync while the driver stages the bytes.
struct HostTime {
  int64_t own = 0;
  int64_t queued = 0;
};
// The copy's wait behind the launch queue: from its launch call (plus the idle-queue
// latency) until it starts, when the GPU works meanwhile; an empty interval when none.
Interval queue_wait(const RuleIndex& ix, EventId g) {
  const EventId l = ix.tree.launcher(g);
  if (l == kNoEvent) return {0, 0};
  const int64_t from = ix.t.ts[l] + ix.launch_latency;
  return ix.t.ts[g] > from && covered(ix.busy, from, ix.t.ts[g]) > 0 ? Interval{from, ix.t.ts[g]} : Interval{0, 0};
}
HostTime host_time(const RuleIndex& ix, EventId g, int64_t b, int64_t e, EventId* op_out = nullptr) {
  const Trace& t = ix.t;
  const EventId op = ix.enclosing_op(g);
  const EventId l = ix.tree.launcher(g);
  if (op_out != nullptr) *op_out = op;
  const EventId host = op != kNoEvent ? op : l;
  if (host == kNoEvent) return {};
  const int64_t hb = std::max(b, t.ts[host]), he = std::min(e, t.end(host));
  HostTime h;
  if (he <= hb) return h;
  if (const Interval wait = queue_wait(ix, g); wait.second > wait.first) h.queued = overlap(hb, he, wait.first, wait.second);
  h.own = (he - hb) - h.queued;
  return h;
}


// The call the user wrote that issued a copy: from the copy's op (aten::copy_) up through the
// aten::to / _to_copy above it. The GPU idles while the host is in all of `.to(device)`, its
// destination's allocation and dispatch before the copy_ too (gpuzoo_0047: 61 us of a
// pageable upload's aten::to before its copy_ began read gpu_idle "main thread in aten::to").
EventId user_call(const RuleIndex& ix, EventId op) {
  for (EventId up = ix.enclosing_op(op); up != kNoEvent && ix.has(up, kCastOp); up = ix.enclosing_op(up)) op = up;
  return op;
}

// pageable_memcpy: copy time in the range; 0.5% fires, 5% is certain.
constexpr double kPageableFireShare = 0.005;
constexpr double kPageableStrongShare = 0.05;
// small_transfers: count of small copies around the range (at least kCopyContext of
// time); 8 fire, 64 is certain.
constexpr double kSmallFireCount = 8;
constexpr double kSmallStrongCount = 64;
constexpr int64_t kCopyContext = 1'000'000;
// Small copies whose ops follow each other closer than this are one burst (the host makes
// the next value and copies it); a longer pause is other work (kLongGap: a stall).
constexpr int64_t kBurstPause = kLongGap;
// offload_pingpong: time of copies whose size went both ways; 2% of the range fires, 30% is
// certain (the catalog's "memcpy a large share of step time").
constexpr double kPingpongFireShare = 0.02;
constexpr double kPingpongStrongShare = 0.30;
// Without steps, the partner copy must lie within this of the copy (a step's order).
constexpr int64_t kPingpongHorizon = 1'000'000'000;
// How far before the range a round-trip copy may have landed and still leave the GPU idle
// in it (the host syncs on it, then launches again): host_sync's lookback.
constexpr int64_t kPingpongLookback = 10'000'000;
// redundant_copy: large device-to-device copy time as a share of GPU busy time; 5% fires,
// 30% is certain. And at least this many copies, so one odd copy does not fire.
constexpr double kRedundantFireShare = 0.05;
constexpr double kRedundantStrongShare = 0.30;
constexpr size_t kRedundantMinCopies = 3;

}  // namespace

void detect_pageable_memcpy(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  RuleFinding f;
  int64_t copy_time = 0, copy_here = 0, bytes = 0, host = 0;
  int n_up = 0, n_down = 0;
  std::map<std::string, int64_t> by_op;
  std::vector<Interval> host_spans;
  std::vector<Interval> in_range;  // the host in the calls that issue them, in the range
  for (EventId g : copies_judged(ix, begin, end)) {
    const std::string_view n = t.name_of(g);
    if (n.find("Pageable") == std::string_view::npos || bytes_of(t, g) < kSmallCopyBytes) continue;
    // Half of a round trip (the same bytes back the other way in the step) is offload: the
    // cause is moving the tensor out at all, and pinning it would only make the move faster.
    // offload_pingpong reports it, with the host's wait in its copies.
    if (round_trip_partner(ix, g) != kNoEvent) continue;
    EventId op;
    // The whole wait is the pattern's: from pinned memory with non_blocking=True the host
    // would not wait for the queue ahead of the copy at all.
    const HostTime h = host_time(ix, g, begin, end, &op);
    host += h.own + h.queued;
    copy_time += t.dur[g];
    copy_here += overlap(t.ts[g], t.end(g), begin, end);
    bytes += bytes_of(t, g);
    (direction(n) == Dir::DtoH ? n_down : n_up)++;
    by_op[op == kNoEvent ? std::string(n) : std::string(t.name_of(op))] += t.dur[g];
    if (op != kNoEvent) {
      const EventId call = user_call(ix, op);
      host_spans.emplace_back(t.ts[call], t.end(call));
      host += overlap(t.ts[call], t.ts[op], begin, end) + overlap(t.end(op), t.end(call), begin, end);
      in_range.emplace_back(std::max(begin, t.ts[call]), std::min(end, t.end(call)));
    } else if (const EventId l = ix.tree.launcher(g); l != kNoEvent) {
      in_range.emplace_back(std::max(begin, t.ts[l]), std::min(end, t.end(l)));
    }
    f.events.push_back(g);
  }
  // The cost lies where the host is in those calls: the report lists these as the
  // occurrences, where it listed the copies' own GPU time (gpuzoo_0047: "costs ~315 us per
  // step" over two 17 us copies). Copies issued by one call count it once.
  std::erase_if(in_range, [](const Interval& iv) { return iv.second <= iv.first; });
  f.spans = merge_intervals(std::move(in_range));
  host = std::min(host, total_length(f.spans));
  const double range = static_cast<double>(end - begin);
  // What the range shows of the pattern: the copies' GPU time in it, or the host's wait for
  // them in it when the copy itself runs outside.
  const double signal = static_cast<double>(std::max(copy_here, host)) / range;
  if (f.events.empty() || signal < kPageableFireShare) return;
  f.id = "pageable_memcpy";
  f.confidence = confidence_between(signal, kPageableFireShare, kPageableStrongShare);
  f.cost = host;
  set_span(t, f);
  const double gbps = copy_time > 0 ? static_cast<double>(bytes) / static_cast<double>(copy_time) : 0;
  f.evidence.push_back(fmt::format("{} from/to pageable host memory ({} up, {} down), {} in {} ({:.1f} GB/s); "
                                   "the host spends {} in the range in the calls that issue them and waits for them",
                                   count_text(f.events.size(), "copy", "copies"), n_up, n_down, bytes_text(bytes), dur_text(copy_time), gbps,
                                   dur_text(host)));
  std::stable_sort(f.events.begin(), f.events.end(), [&](EventId a, EventId b) { return t.dur[a] > t.dur[b]; });
  const EventId top = f.events.front();
  const EventId top_op = ix.enclosing_op(top);  // the op that issued the largest copy, when one did
  f.evidence.push_back(fmt::format("largest: {} {} {}{}", t.name_of(top), bytes_text(bytes_of(t, top)), dur_text(t.dur[top]),
                                   top_op == kNoEvent ? "" : fmt::format(" under {}", t.name_of(top_op))));
  f.locations = user_locations(ix, f.events);
  f.fix = n_up >= n_down
              ? fmt::format("pin the host tensors: DataLoader(pin_memory=True) or tensor.pin_memory(), then "
                            ".to(device, non_blocking=True) for the {} inputs copied by {}{}",
                            bytes_text(bytes / std::max(1, n_up + n_down)), top_key(by_op), at_text(f.locations))
              : fmt::format("copy device results into a pinned buffer (torch.empty(..., pin_memory=True).copy_(x, "
                            "non_blocking=True)) instead of {}{}",
                            top_key(by_op), at_text(f.locations));
  // The GPU waiting on these copies' host side is explained.
  for (auto [b, e] : merge_intervals(host_spans))
    for (auto iv : uncovered(ix.busy, std::max(b, ix.gpu_first), std::min(e, ix.gpu_last)))
      out.explained_idle.push_back(iv);
  out.findings.push_back(std::move(f));
}

void detect_small_transfers(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  RuleFinding f;
  int64_t host = 0, bytes = 0, queued = 0, longest_queue = 0;
  int up = 0, down = 0;
  size_t here = 0;  // copies of the burst that start in the range or hold the host in it
  std::vector<Interval> host_spans;  // where the host is in their ops, in the range
  std::map<std::string, int64_t> by_op;
  // The copies are judged over at least kCopyContext around the range, as launch_bound
  // judges kernels: a 98 us window of a short trace holds 3 of a burst of 40 small uploads,
  // too few to judge alone. The cost is the host time they take in the range.
  const int64_t mid = begin + (end - begin) / 2;
  const int64_t ctx_b = std::min(begin, mid - kCopyContext / 2), ctx_e = std::max(end, mid + kCopyContext / 2);
  // A range the host spends (at least half of it) inside one small copy's call whose copy
  // starts far from it (a pageable copy waits for everything queued before it: 64 ms in
  // aten::copy_ for 8 bytes) is judged by that copy's burst too, counted over the same
  // kCopyContext around the copy: the host queues nothing while it waits, and the burst's fix
  // ends the wait.
  EventId held = kNoEvent, held_call = kNoEvent;
  ix.memcpy_calls.each_overlapping(t, begin, end, [&](EventId call) {
    if (2 * overlap(t.ts[call], t.end(call), begin, end) < end - begin) return;
    if (held_call != kNoEvent && t.dur[call] <= t.dur[held_call]) return;
    for (EventId g : ix.tree.children(call))
      if (t.category[g] == Category::GpuMemcpy && ix.on_primary(g) && is_small_host_copy(t, g) &&
          (t.ts[g] < ctx_b || t.ts[g] >= ctx_e)) {
        held = g;
        held_call = call;
        break;
      }
  });
  std::vector<Interval> judged{{ctx_b, ctx_e}};
  if (held != kNoEvent) judged.emplace_back(t.ts[held] - kCopyContext / 2, t.ts[held] + kCopyContext / 2);
  std::vector<EventId> candidates;
  for (auto [jb, je] : merge_intervals(std::move(judged))) {
    const std::vector<EventId> v = copies_in(ix, jb, je);
    candidates.insert(candidates.end(), v.begin(), v.end());
  }
  for (EventId g : candidates) {
    if (!is_small_host_copy(t, g)) continue;
    const Dir d = direction(t.name_of(g));
    const int64_t b = bytes_of(t, g);
    EventId op;
    const HostTime h = host_time(ix, g, begin, end, &op);
    host += h.own;
    queued += h.queued;
    // Where the host is in the op on its own account: its whole span, less a wait behind
    // the queue (the queue's idle gaps are not the copies').
    if (const EventId held = op != kNoEvent ? op : ix.tree.launcher(g); held != kNoEvent) {
      if (const Interval wait = queue_wait(ix, g); wait.second > wait.first) {
        host_spans.emplace_back(t.ts[held], std::max(t.ts[held], wait.first));
        host_spans.emplace_back(std::min(t.end(held), wait.second), t.end(held));
      } else {
        host_spans.emplace_back(t.ts[held], t.end(held));
      }
    }
    here += (t.ts[g] >= begin && t.ts[g] < end) || h.own + h.queued > 0;
    if (const EventId l = ix.tree.launcher(g); l != kNoEvent) longest_queue = std::max(longest_queue, t.ts[g] - t.ts[l]);
    bytes += b;
    (d == Dir::HtoD ? up : down)++;
    by_op[op == kNoEvent ? std::string("(no op)") : std::string(t.name_of(op))] += 1;
    f.events.push_back(g);
  }
  if (static_cast<double>(f.events.size()) < kSmallFireCount || here == 0) return;
  f.id = "small_transfers";
  f.confidence = confidence_between(static_cast<double>(f.events.size()), kSmallFireCount, kSmallStrongCount);
  f.cost = host;
  set_span(t, f);
  f.evidence.push_back(fmt::format("{} host/device copies under {} ({} HtoD, {} DtoH), {} moved in all, mean {}; "
                                   "{} of host time in the ops that issue them",
                                   f.events.size(), bytes_text(kSmallCopyBytes), up, down, bytes_text(bytes),
                                   bytes_text(bytes / static_cast<int64_t>(f.events.size())), dur_text(host)));
  if (ctx_e - ctx_b > end - begin && held == kNoEvent)
    f.evidence.push_back(fmt::format("counted over the {} around the range, {} of them in it; the host time is the "
                                     "range's",
                                     dur_text(ctx_e - ctx_b), here));
  if (held != kNoEvent) {
    // The call the host is in across the range, with its whole length, as alloc_churn and
    // host_sync say theirs.
    const EventId op = ix.enclosing_op(held);
    const EventId call = op != kNoEvent ? op : held_call;
    const Interval wait = queue_wait(ix, held);
    const auto at = [&](int64_t ts) { return fmt::format("{}{}", ts < begin ? "-" : "+", dur_text(std::llabs(ts - begin))); };
    const int64_t from_range = t.ts[held] >= end ? t.ts[held] - end : begin - t.ts[held];
    f.evidence.push_back(fmt::format(
        "the host is in {} of {} across the range ({} to {} of the range start), the call of the {} {} of this burst "
        "that starts on the GPU {} {} the range: {}the host launches nothing until it returns{}; the burst is counted "
        "over the {} around that copy",
        t.name_of(call), dur_text(t.dur[call]), at(t.ts[call]), at(t.end(call)), bytes_text(bytes_of(t, held)),
        t.name_of(held), dur_text(from_range), t.ts[held] >= end ? "after" : "before",
        wait.second > wait.first ? fmt::format("it waits {} behind the launch queue, and ", dur_text(wait.second - wait.first))
                                 : "",
        2 * covered(ix.busy, begin, end) >= end - begin ? ", while the GPU works off what was queued before" : "",
        dur_text(kCopyContext)));
  }
  const std::string top_op = top_key(by_op);
  f.evidence.push_back(top_op == "(no op)"
                           ? fmt::format("most issued outside any op ({})", count_text(by_op[top_op], "copy", "copies"))
                           : fmt::format("most issued by {} ({})", top_op, count_text(by_op[top_op], "copy", "copies")));
  if (queued > 0)
    f.evidence.push_back(fmt::format("those ops also wait {} behind the launch queue (up to {} from a launch call to its "
                                     "copy's start): the copies wait for the GPU to work off earlier work, a sync on "
                                     "the queue, not transfer cost",
                                     dur_text(queued), dur_text(longest_queue)));
  f.locations = user_locations(ix, f.events);
  f.fix = fmt::format("create these tensors on the device (torch.tensor(..., device='cuda'), torch.full), batch the "
                      "{} small copies{}{} into one, and keep scalars in Python",
                      f.events.size(), top_op == "(no op)" ? "" : " issued by " + top_op, at_text(f.locations));
  // The GPU idle while the host works through the burst is theirs: in the copies' ops, and
  // between one copy's op and the next when the host goes straight on to it (making the next
  // scalar tensor), since one copy of the batched values would spare both. Idle after the
  // burst, or a long pause inside it, is not.
  std::sort(host_spans.begin(), host_spans.end());
  std::vector<Interval> burst;
  for (auto iv : host_spans) {
    if (!burst.empty() && iv.first - burst.back().second <= kBurstPause)
      burst.back().second = std::max(burst.back().second, iv.second);
    else
      burst.push_back(iv);
  }
  std::vector<Interval> idle_ivs;
  for (auto [b, e] : burst)
    for (auto iv : uncovered(ix.busy, std::max({b, begin, ix.gpu_first}), std::min({e, end, ix.gpu_last})))
      idle_ivs.push_back(iv);
  if (const int64_t idle = idle_of(idle_ivs); idle > 0) {
    f.evidence.push_back(fmt::format("GPU idle {} in the range while the host issues these copies one by one ({} of "
                                     "the range)",
                                     dur_text(idle), pct_text(static_cast<double>(idle) / static_cast<double>(end - begin))));
    f.cost = std::max(f.cost, idle);
    f.spans = idle_ivs;
  }
  out.explained_idle.insert(out.explained_idle.end(), idle_ivs.begin(), idle_ivs.end());
  // The launch gaps that end as one of these copies arrives are theirs too (launch_gaps.cpp):
  // launch_bound, which runs later, leaves them out rather than count the same idle again.
  const std::vector<EventId>& copies = f.events;
  claim_launch_gaps(gaps_caused_by(ix, launch_gaps(ix, begin, end), out,
                                   [&](size_t k) { return std::find(copies.begin(), copies.end(), ix.gpu[k]) != copies.end(); }),
                    out);
  out.findings.push_back(std::move(f));
}

EventId round_trip_partner(const RuleIndex& ix, EventId g) {
  const Trace& t = ix.t;
  const Dir d = direction(t.name_of(g));
  const int64_t b = bytes_of(t, g);
  if (b < kSmallCopyBytes || (d != Dir::HtoD && d != Dir::DtoH)) return kNoEvent;
  const bool out_and_back_only = b < kLargeCopyBytes;
  const int32_t step = ix.tree.step_of(g);
  EventId partner = kNoEvent;
  const int64_t lo = t.ts[g] - kPingpongHorizon, hi = t.end(g) + kPingpongHorizon;
  ix.bulk_copies.each_overlapping(t, lo, hi, [&](EventId o) {
    if (partner != kNoEvent || o == g || bytes_of(t, o) != b) return;
    const Dir od = direction(t.name_of(o));
    if (!((d == Dir::HtoD && od == Dir::DtoH) || (d == Dir::DtoH && od == Dir::HtoD))) return;
    const EventId down = d == Dir::DtoH ? g : o, up = d == Dir::DtoH ? o : g;
    if (out_and_back_only && t.ts[up] < t.end(down)) return;
    if (step >= 0 && ix.tree.step_of(o) != step) return;
    partner = o;
  });
  return partner;
}

EventId sync_completing(const RuleIndex& ix, EventId g) {
  const EventId l = ix.tree.launcher(g);
  const EventId parent = l == kNoEvent ? kNoEvent : ix.tree.parent(l);
  if (parent == kNoEvent) return kNoEvent;
  for (EventId s : ix.tree.children(parent))
    if (ix.has(s, kSyncCall) && ix.t.ts[s] >= ix.t.end(l)) return s;
  return kNoEvent;
}

namespace {
// The op the user called for a copy: from aten::copy_ up through aten::_to_copy and aten::to
// (`.to()`, `.cpu()`, `.cuda()`), kNoEvent for kNoEvent.
EventId outermost_copy_op(const RuleIndex& ix, EventId op) {
  while (op != kNoEvent) {
    const EventId p = ix.tree.parent(op);
    if (p == kNoEvent || ix.t.category[p] != Category::CpuOp || !ix.has(p, kCastOp)) break;
    op = p;
  }
  return op;
}

// Whether a user function's GPU work is round-trip copies only: each launch on its thread
// within its span is a copy of at least 64 KB with a same-size partner the other way. A
// function that also launches kernels (the step, the forward) is more than the round trip.
bool only_round_trips_under(const RuleIndex& ix, EventId fn) {
  const Trace& t = ix.t;
  size_t copies = 0;
  auto [li, lend] = ix.launch_range(t.ts[fn], t.end(fn));
  for (; li < lend; ++li) {
    const EventId g = ix.gpu[ix.launch_gpu[li]];
    const EventId l = ix.tree.launcher(g);
    if (l == kNoEvent || t.track[l] != t.track[fn]) continue;
    if (t.category[g] != Category::GpuMemcpy || round_trip_partner(ix, g) == kNoEvent) return false;
    ++copies;
  }
  return copies > 0;
}
}  // namespace

void detect_offload_pingpong(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  // A round trip is longer than a window: a large copy is part of one when a copy of the
  // same size went the other way in the same step (or, without steps, within
  // kPingpongHorizon). The range's share of it: the copies' time in it, and the GPU idle in
  // it after a sync that waited for one of them to land, until the host launches again
  // (the round trip's wait, not a scalar read's: host_sync leaves those syncs alone).
  RuleFinding f;
  int64_t time = 0, bytes = 0;
  size_t matched = 0;
  std::vector<EventId> partners;
  std::vector<Interval> idle_ivs;
  std::vector<Interval> copies_here;  // the copies' time in the range
  // The host waiting in such a sync across the range (the copy issued long before it).
  EventId waiting = kNoEvent;
  // The idle in the user function that makes the round trip, before it issues the copies.
  std::vector<Interval> in_function;
  EventId function = kNoEvent;
  std::vector<EventId> candidates;
  ix.bulk_copies.each_overlapping(t, begin - kPingpongLookback, end, [&](EventId g) { candidates.push_back(g); });
  ix.syncs.each_overlapping(t, begin, end, [&](EventId s) {
    const EventId parent = ix.tree.parent(s);
    if (parent == kNoEvent) return;
    for (EventId call : ix.tree.children(parent))
      if (ix.has(call, kMemcpyCall) && t.ts[call] <= t.ts[s])
        for (EventId g : ix.tree.children(call))
          if (t.category[g] == Category::GpuMemcpy && ix.on_primary(g) && bytes_of(t, g) >= kSmallCopyBytes &&
              std::find(candidates.begin(), candidates.end(), g) == candidates.end())
            candidates.push_back(g);
  });
  // And the copies of a `.to()` the host is inside in the range, before its copy is issued.
  ix.cpu_ops.each_overlapping(t, begin, end, [&](EventId op) {
    if (!ix.has(op, kCastOp) || t.end(op) <= end) return;
    std::vector<EventId> todo(ix.tree.children(op).begin(), ix.tree.children(op).end());
    while (!todo.empty()) {
      const EventId e = todo.back();
      todo.pop_back();
      if (t.category[e] == Category::GpuMemcpy && ix.on_primary(e) && bytes_of(t, e) >= kSmallCopyBytes &&
          std::find(candidates.begin(), candidates.end(), e) == candidates.end())
        candidates.push_back(e);
      for (EventId c : ix.tree.children(e)) todo.push_back(c);
    }
  });
  for (EventId g : candidates) {
    const EventId partner = round_trip_partner(ix, g);
    if (partner == kNoEvent) continue;
    int64_t idle = 0;
    // The GPU idle in the range from `from` until the host, back from `e`, launches again,
    // unless it works long first: that idle is the work's, as with host_sync (host_works_after).
    auto take_idle_until_resume = [&](int64_t from, EventId e) {
      const int64_t resume = host_works_after(ix, e) ? t.end(e) : ix.resume_after(t.end(e));
      for (auto iv : uncovered(ix.busy, std::max({from, ix.gpu_first, begin}), std::min({resume, ix.gpu_last, end}))) {
        idle += iv.second - iv.first;
        idle_ivs.push_back(iv);
      }
    };
    const EventId s = sync_completing(ix, g);
    if (s != kNoEvent) take_idle_until_resume(ix.drained_during(s), s);
    // The host inside the copy's own op (a pageable copy returns only once the bytes have
    // moved, and .to("cpu") waits for the queue ahead of it): the GPU idle until the host
    // launches again is the round trip's too, from when the host entered the call the user
    // made (aten::to, whose _to_copy allocates the destination before copy_ issues the copy).
    if (const EventId op = outermost_copy_op(ix, ix.enclosing_op(g)); op != kNoEvent) {
      take_idle_until_resume(t.ts[op], op);
      // With with_stack, the user function that makes the round trip shows too: when it
      // launches nothing but round-trip copies, the GPU idle while the host is in it before
      // the copy (choosing the tensors to move: gpuzoo_0058's 3.7 ms of sorted(parameters)
      // in its offload function, which gpu_idle reported) is the round trip's as well.
      if (const EventId fn = user_frame_above(ix, op); fn != kNoEvent && only_round_trips_under(ix, fn))
        for (auto iv : uncovered(ix.busy, std::max({t.ts[fn], ix.gpu_first, begin}), std::min({t.ts[op], ix.gpu_last, end}))) {
          idle += iv.second - iv.first;
          idle_ivs.push_back(iv);
          in_function.push_back(iv);
          function = fn;
        }
    }
    const bool waits_here = s != kNoEvent && overlap(t.ts[s], t.end(s), begin, end) > 0;
    if (waits_here && (waiting == kNoEvent || t.dur[s] > t.dur[waiting])) waiting = s;
    const int64_t here = overlap(t.ts[g], t.end(g), begin, end);
    if (here == 0 && idle == 0 && !waits_here) continue;
    ++matched;
    time += here;
    if (here > 0) copies_here.emplace_back(std::max(begin, t.ts[g]), std::min(end, t.end(g)));
    bytes += bytes_of(t, g);
    f.events.push_back(g);
    partners.push_back(partner);
  }
  idle_ivs = merge_intervals(std::move(idle_ivs));
  int64_t idle = 0;
  for (auto [b, e] : idle_ivs) idle += e - b;
  const double range = static_cast<double>(end - begin);
  const double share = static_cast<double>(time + idle) / range;
  if (matched == 0 || (share < kPingpongFireShare && waiting == kNoEvent)) return;
  f.id = "offload_pingpong";
  f.confidence = confidence_between(share, kPingpongFireShare, kPingpongStrongShare);
  f.cost = std::min(end - begin, time + idle);
  // The cost lies in the copies' time and the idle here: the report lists these as the
  // occurrences, where it listed the copies alone (gpuzoo_0058: 136.9 ms over 127.2 ms), and
  // the finding shows there (its copies run on past the range; without either, the copies).
  copies_here.insert(copies_here.end(), idle_ivs.begin(), idle_ivs.end());
  f.spans = merge_intervals(std::move(copies_here));
  set_span(t, f);
  const EventId g = f.events.front(), p = partners.front();
  f.events.insert(f.events.end(), partners.begin(), partners.end());
  f.evidence.push_back(fmt::format("{} of at least 64 KB in the range {} a same-size copy the other way in the same "
                                   "step: {} moved, {} of copy time here ({} of the range)",
                                   count_text(matched, "copy", "copies"), matched == 1 ? "has" : "have", bytes_text(bytes), dur_text(time), pct_text(static_cast<double>(time) / range)));
  f.evidence.push_back(fmt::format("{} {} ({}) and back: {} {} ({}), {} apart", t.name_of(g), bytes_text(bytes_of(t, g)),
                                   dur_text(t.dur[g]), t.name_of(p), bytes_text(bytes_of(t, p)), dur_text(t.dur[p]),
                                   dur_text(std::llabs(t.ts[p] - t.ts[g]))));
  if (idle > 0)
    f.evidence.push_back(fmt::format("GPU idle {} in the range while the host issues these copies and waits for them "
                                     "to land, until it launches again ({} of the range)",
                                     dur_text(idle), pct_text(static_cast<double>(idle) / range)));
  if (function != kNoEvent) {
    int64_t before = 0;
    for (auto [b, e] : merge_intervals(std::move(in_function))) before += e - b;
    f.evidence.push_back(fmt::format("{} of that idle with the host in {} before it issues the copies: the function "
                                     "launches nothing but round-trip copies",
                                     dur_text(before), t.name_of(function)));
  }
  if (waiting != kNoEvent && (t.ts[waiting] < begin || t.end(waiting) > end))
    f.evidence.push_back(fmt::format("the host waits in {} of {} across the range ({}{} to {}{} of the range start) for "
                                     "such a copy to land, launching nothing",
                                     t.name_of(waiting), dur_text(t.dur[waiting]), t.ts[waiting] < begin ? "-" : "+",
                                     dur_text(std::llabs(t.ts[waiting] - begin)), t.end(waiting) < begin ? "-" : "+",
                                     dur_text(std::llabs(t.end(waiting) - begin))));
  out.explained_idle.insert(out.explained_idle.end(), idle_ivs.begin(), idle_ivs.end());
  f.locations = user_locations(ix, f.events);
  f.fix = fmt::format("keep the {} tensor that goes out and comes back on the GPU when memory allows{}; if offloading "
                      "is needed, use pinned buffers and prefetch on a side stream so the copies overlap compute",
                      bytes_text(bytes_of(t, g)), at_text(f.locations));
  out.findings.push_back(std::move(f));
}

namespace {
// Product of the first tensor's dims times its element size, from the op's recorded
// shapes; -1 when not recorded.
int64_t first_tensor_bytes(const Trace& t, EventId op) {
  const OpArgs* a = t.op(op);
  if (a == nullptr) return -1;
  const std::string_view dims = t.strings.view(a->input_dims);
  const std::string_view types = t.strings.view(a->input_types);
  const size_t open = dims.find('[', dims.find('[') + 1);
  if (open == std::string_view::npos) return -1;
  const size_t close = dims.find(']', open);
  if (close == std::string_view::npos) return -1;
  int64_t n = 1;
  bool any = false;
  for (size_t i = open + 1; i < close;) {
    while (i < close && (dims[i] < '0' || dims[i] > '9')) ++i;
    if (i >= close) break;
    int64_t v = 0;
    while (i < close && dims[i] >= '0' && dims[i] <= '9' && v < (int64_t{1} << 40)) v = v * 10 + (dims[i++] - '0');
    n = std::min<int64_t>(n * v, int64_t{1} << 50);
    any = true;
  }
  if (!any) return -1;
  int64_t size = 4;
  const size_t q = types.find('"');
  const std::string_view first = q == std::string_view::npos ? types : types.substr(q + 1, types.find('"', q + 1) - q - 1);
  if (first == "c10::Half" || first == "c10::BFloat16" || first == "short int") size = 2;
  if (first == "double" || first == "long int" || first == "c10::complex<float>") size = 8;
  if (first == "bool" || first == "unsigned char" || first == "signed char" || first.find("Float8") != std::string_view::npos)
    size = 1;
  return n * size;
}

// redundant_copy of copies launched one by one: a device copy made by aten::clone /
// aten::contiguous of as many bytes as the device copy that ran on the GPU just before it,
// with nothing else run between them, most likely copies what that copy made (`.clone()` of
// a fresh clone, `.t().contiguous()` undone by another; the trace records no tensor
// identity, so a run of same-size clones of different tensors reads the same, and the
// evidence says only what is recorded). Each costs a launch and the host's dispatch
// for a microsecond of copying; on a fast GPU the idle they leave is most of what they
// cost. Counted over the 1 ms around the range (cast_churn's context), since a window of
// an eager step holds a few of them; the idle fires at cast_churn's bars.
constexpr int64_t kRecopyContext = 1'000'000;
constexpr double kRecopyIdleFireShare = 0.15;
constexpr double kRecopyIdleStrongShare = 0.50;

// The aten::clone / aten::contiguous a GPU copy was made for: its enclosing op, or that
// op's parent (copy_ under clone); kNoEvent for any other GPU work.
EventId clone_of(const RuleIndex& ix, EventId g) {
  const EventId op = ix.enclosing_op(g);
  if (op == kNoEvent) return kNoEvent;
  if (ix.has(op, kCloneOp)) return op;
  const EventId up = ix.tree.parent(op);
  return up != kNoEvent && ix.has(up, kCloneOp) ? up : kNoEvent;
}

// The call the user wrote for a clone's copy: the outermost aten::contiguous / aten::clone
// above it (aten::contiguous above its aten::clone); kNoEvent for kNoEvent.
EventId clone_call(const RuleIndex& ix, EventId clone) {
  EventId call = clone;
  for (EventId up = clone == kNoEvent ? kNoEvent : ix.tree.parent(clone); up != kNoEvent && ix.has(up, kCloneOp);
       up = ix.tree.parent(up))
    call = up;
  return call;
}

// A device-side copy: the aten::clone / aten::contiguous it was made for (clone_of) and the
// bytes it moves (a Memcpy DtoD's recorded size, a clone kernel's tensor), -1 for anything
// else: uploads and downloads are not copies of a copy.
struct DeviceCopy {
  EventId clone = kNoEvent;
  int64_t bytes = -1;
};

DeviceCopy device_copy(const RuleIndex& ix, EventId g) {
  const Trace& t = ix.t;
  DeviceCopy c{clone_of(ix, g), -1};
  if (t.category[g] == Category::GpuMemcpy) c.bytes = direction(t.name_of(g)) == Dir::DtoD ? bytes_of(t, g) : -1;
  else if (t.category[g] == Category::Kernel && c.clone != kNoEvent) c.bytes = first_tensor_bytes(t, c.clone);
  return c;
}

// The GPU work at position k of ix.gpu when it is a clone's copy of what the device copy
// just before it on the primary device made (same bytes, the same launching thread, a
// different clone call), else nullopt. Computed once per copy: the caller names the copy
// by its clone call and sizes it from what this returns.
std::optional<DeviceCopy> copies_a_copy(const RuleIndex& ix, size_t k) {
  const Trace& t = ix.t;
  const EventId g = ix.gpu[k];
  if (!ix.on_primary(g) || ix.gpu_in_optimizer[k]) return std::nullopt;
  const DeviceCopy copy = device_copy(ix, g);
  if (copy.clone == kNoEvent || copy.bytes <= 0) return std::nullopt;
  for (size_t j = k, seen = 0; j-- > 0 && seen < 64; ++seen) {
    const EventId p = ix.gpu[j];
    if (!ix.on_primary(p)) continue;
    const EventId lp = ix.tree.launcher(p), lg = ix.tree.launcher(g);
    const DeviceCopy before = device_copy(ix, p);
    if (before.bytes == copy.bytes && before.clone != copy.clone && lp != kNoEvent && lg != kNoEvent &&
        t.track[lp] == t.track[lg])
      return copy;
    return std::nullopt;
  }
  return std::nullopt;
}
}  // namespace

void detect_redundant_copy(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  if (ix.gpu.empty()) return detect_redundant_copy_on_cpu(ix, begin, end, out);  // cpu_op_rules.cpp
  const Trace& t = ix.t;
  RuleFinding f;
  int64_t time = 0, bytes = 0, dtod = 0, clones = 0, busy_time = 0;
  std::map<std::string, int64_t> by_op;
  // The fix names the call the user wrote: gpuzoo_0011's fix read "avoid the copies made by
  // aten::copy_", the op under the .contiguous() / .clone() its step calls.
  std::map<std::string, int64_t> by_call;
  auto [lo, hi] = ix.gpu_range(begin, end);
  for (size_t i = lo; i < hi; ++i) {
    const EventId g = ix.gpu[i];
    if (!ix.on_primary(g) || ix.gpu_in_optimizer[i]) continue;
    busy_time += t.dur[g];
    int64_t b = -1;
    const EventId op = ix.enclosing_op(g);
    if (t.category[g] == Category::GpuMemcpy) {
      if (direction(t.name_of(g)) != Dir::DtoD) continue;
      b = bytes_of(t, g);
      if (b >= kLargeCopyBytes) ++dtod;
    } else if (t.category[g] == Category::Kernel && op != kNoEvent) {
      // A copy kernel launched for .contiguous() / .clone().
      const EventId clone = clone_of(ix, g);
      if (clone == kNoEvent) continue;
      b = first_tensor_bytes(t, clone);
      if (b >= kLargeCopyBytes) ++clones;
    } else {
      continue;
    }
    if (b < kLargeCopyBytes) continue;
    time += t.dur[g];
    bytes += b;
    by_op[op == kNoEvent ? std::string("(no op)") : std::string(t.name_of(op))] += t.dur[g];
    const EventId call = clone_call(ix, clone_of(ix, g));
    by_call[call != kNoEvent ? std::string(t.name_of(call)) : op != kNoEvent ? std::string(t.name_of(op)) : "(no op)"] += t.dur[g];
    f.events.push_back(g);
  }
  const double share = busy_time > 0 ? static_cast<double>(time) / static_cast<double>(busy_time) : 0.0;
  const bool large_fires = f.events.size() >= kRedundantMinCopies && share >= kRedundantFireShare;
  // Copies of a copy launched one by one, and the launch gaps they end (copies_a_copy).
  const int64_t mid = begin + (end - begin) / 2;
  const int64_t ctx_b = std::min(begin, mid - kRecopyContext / 2), ctx_e = std::max(end, mid + kRecopyContext / 2);
  std::set<size_t> recopy_at;
  int64_t recopy_min = 0, recopy_max = 0;
  std::map<std::string, int> recopies_by_op;
  std::vector<EventId> recopies;
  {
    auto [clo, chi] = ix.gpu_range(ctx_b, ctx_e);
    for (size_t k = clo; k < chi; ++k) {
      const std::optional<DeviceCopy> copy = copies_a_copy(ix, k);
      if (!copy) continue;
      const EventId g = ix.gpu[k];
      recopy_at.insert(k);
      const EventId call = clone_call(ix, copy->clone);  // named by the call the user wrote
      ++recopies_by_op[std::string(t.name_of(call))];
      const int64_t b = copy->bytes;
      recopy_min = recopy_at.size() == 1 ? b : std::min(recopy_min, b);
      recopy_max = std::max(recopy_max, b);
      if (t.ts[g] >= begin && t.ts[g] < end) recopies.push_back(g);
    }
  }
  const std::vector<LaunchGap> gaps = launch_gaps(ix, begin, end, true);
  const std::vector<Interval> idle =
      recopy_at.size() >= kRedundantMinCopies
          ? gaps_caused_by(ix, gaps, out, [&](size_t k) { return recopy_at.count(k) > 0; })
          : std::vector<Interval>{};
  const int64_t recopy_idle = idle_of(idle);
  const double idle_share = static_cast<double>(recopy_idle) / static_cast<double>(end - begin);
  const bool idle_fires = idle_share >= kRecopyIdleFireShare;
  if (!large_fires && !idle_fires) return;
  f.id = "redundant_copy";
  f.confidence = std::max(large_fires ? confidence_between(share, kRedundantFireShare, kRedundantStrongShare) : 0.0,
                          idle_fires ? confidence_between(idle_share, kRecopyIdleFireShare, kRecopyIdleStrongShare) : 0.0);
  if (!large_fires) {
    f.events.clear();
    by_op.clear();
    by_call.clear();
    time = 0;
  }
  const size_t large_copies = f.events.size();
  const int64_t large_time = time;
  if (idle_fires) {
    // A copy counted both ways (a large one that copies a copy) counts its time once.
    for (EventId g : recopies)
      if (std::find(f.events.begin(), f.events.end(), g) == f.events.end()) {
        f.events.push_back(g);
        time += t.dur[g];
      }
    if (f.events.empty()) f.events = kernels_ending(ix, gaps, idle);  // only the wait shows here
  }
  f.cost = time + (idle_fires ? recopy_idle : 0);
  // Where that cost lies, as cast_churn (copies launched one by one too) says it: the copies'
  // time in the range and the launch gaps gaps_caused_by gave them; the extent follows.
  f.spans = kernels_and_idle(t, f.events, idle_fires ? idle : std::vector<Interval>{}, begin, end);
  set_span(t, f);
  if (large_fires) {
    // The kinds there are ("3 Memcpy DtoD", not "3 Memcpy DtoD, 0 contiguous/clone kernels").
    std::string kinds = dtod > 0 ? fmt::format("{} Memcpy DtoD", dtod) : "";
    if (clones > 0) kinds += (kinds.empty() ? "" : ", ") + count_text(static_cast<size_t>(clones), "contiguous/clone kernel");
    f.evidence.push_back(fmt::format("{} device-to-device copies of at least {} ({}): {} moved in {}, "
                                     "{} of GPU time in the range",
                                     large_copies, bytes_text(kLargeCopyBytes), kinds, bytes_text(bytes),
                                     dur_text(large_time), pct_text(share)));
    const std::string top_op = top_key(by_op);
    f.evidence.push_back(top_op == "(no op)" ? fmt::format("most outside any op ({})", dur_text(by_op[top_op]))
                                             : fmt::format("most under {} ({})", top_op, dur_text(by_op[top_op])));
  }
  if (idle_fires) {
    std::string most;
    int most_n = 0;
    for (auto& [name, n] : recopies_by_op)
      if (n > most_n) most_n = n, most = name;
    const std::string sizes = recopy_min == recopy_max
                                  ? bytes_text(recopy_min)
                                  : fmt::format("{} to {}", bytes_text(recopy_min), bytes_text(recopy_max));
    f.evidence.push_back(fmt::format("{} copies by aten::clone/contiguous in the {} around the range each follow a device "
                                     "copy of the same size ({}) with nothing else run on the GPU between them, most under "
                                     "{} x{}: most likely the step copies what it has just copied",
                                     recopy_at.size(), dur_text(ctx_e - ctx_b), sizes, most, most_n));
    f.evidence.push_back(fmt::format("GPU idle {} ({} of the range) in {} that {} as soon as such a copy's launch "
                                     "arrives: the host is dispatching copies of copies one by one",
                                     dur_text(recopy_idle), pct_text(idle_share), count_text(idle.size(), "gap"),
                                     idle.size() == 1 ? "ends" : "end"));
    if (by_call.empty()) by_call[most] = 1;
  }
  f.locations = user_locations(ix, f.events);
  const bool ddp = t.strings.find("DistributedDataParallel.forward") != kNoString;
  // DDP's bucket copies are large Memcpy DtoD copies; copies of a copy are the step's own.
  f.fix = ddp && large_fires && dtod >= clones
              ? fmt::format("DDP copies every gradient into its all-reduce bucket ({} per range here): construct "
                            "DistributedDataParallel(..., gradient_as_bucket_view=True) so gradients are views of the "
                            "buckets",
                            bytes_text(bytes))
              : fmt::format("avoid the copies made by {}{}: keep tensors contiguous where they are made, use views "
                            "and in-place ops instead of .contiguous()/.clone()",
                            top_key(by_call), at_text(f.locations));
  if (idle_fires) claim_launch_gaps(idle, out);
  out.findings.push_back(std::move(f));
}

}  // namespace ttap::rules
