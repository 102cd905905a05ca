// Collectives against compute: comm_not_overlapped (communication with no compute
// running) and comm_blocks_compute (compute held back until a collective finishes).
#include <fmt/format.h>

#include <map>

#include "rule_index.hpp"
#include "ttap/collectives.hpp"

namespace ttap::rules {

namespace {

// comm_not_overlapped: exposed communication as a share of the range; 5% fires, 40% is
// certain; and at least kMinExposed in absolute terms.
constexpr double kExposedFireShare = 0.05;
constexpr double kExposedStrongShare = 0.40;
constexpr int64_t kMinExposed = 100'000;
// comm_blocks_compute: compute-stream time lost waiting on collectives, same scale.
constexpr double kBlockedFireShare = 0.05;
constexpr double kBlockedStrongShare = 0.40;
constexpr int64_t kMinBlocked = 100'000;
// A compute kernel that starts within this (plus the idle-queue launch latency) of a
// collective's end, though launched earlier, was waiting for it.
constexpr int64_t kResumeSlack = 20'000;
// A wait on a collective names the c10d op its thread issued within this before it.
constexpr int64_t kIssueWindow = 1'000'000;

// The op that launched a GPU event, or the kernel name when no op did.
std::string comm_op(const RuleIndex& ix, EventId g) {
  const EventId op = ix.tree.owner_op(g);
  return op == kNoEvent ? readable_kernel_name(ix.t.name_of(g)) : std::string(ix.t.name_of(op));
}

std::string top_text(const std::map<std::string, int64_t>& m) {
  std::vector<std::pair<int64_t, std::string>> v;
  for (auto& [k, ns] : m) v.emplace_back(ns, k);
  std::sort(v.rbegin(), v.rend());
  std::string s;
  for (size_t i = 0; i < v.size() && i < 2; ++i) s += fmt::format("{}{} {}", i ? ", " : "", v[i].second, dur_text(v[i].first));
  return s;
}

// The collective a wait waits for: the last c10d op its thread issued in the millisecond
// before the wait began (c10d::allreduce_ before aten::wait), or kNoEvent.
EventId collective_before(const RuleIndex& ix, EventId wait) {
  const Trace& t = ix.t;
  EventId found = kNoEvent;
  ix.cpu_ops.each_overlapping(t, t.ts[wait] - kIssueWindow, t.ts[wait], [&](EventId op) {
    if (t.track[op] != t.track[wait] || t.ts[op] > t.ts[wait] || ix.has(op, kCommWait)) return;
    if (!t.name_of(op).starts_with("c10d::")) return;
    if (found == kNoEvent || t.ts[op] > t.ts[found]) found = op;
  });
  return found;
}

bool ddp_trace(const Trace& t) { return t.strings.find("DistributedDataParallel.forward") != kNoString; }

}  // namespace

void detect_comm_not_overlapped(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  if (ix.comm.empty()) return;
  // A collective on the compute stream itself is exposed because it is serialized with
  // compute there: comm_blocks_compute reports it, with that cause.
  int64_t exposed = 0;
  std::vector<Interval> where;  // the exposed time, for the finding's spans
  for (auto [b, e] : ix.comm_side) {
    if (e <= begin || b >= end) continue;
    for (auto iv : uncovered(ix.compute, std::max(b, begin), std::min(e, end))) exposed += iv.second - iv.first, where.push_back(iv);
  }
  // The host blocked on a collective: while the loop's thread (or the one that launches most)
  // sits in work.wait() it launches nothing, and the GPU, its queue run dry, idles until the
  // collective completes. That idle is the communication's, exposed as surely as a collective
  // kernel running alone (a blocking wait: Gloo, or NCCL with blocking wait on).
  EventId longest_wait = kNoEvent;
  std::vector<Interval> waited;
  ix.cpu_ops.each_overlapping(t, begin, end, [&](EventId w) {
    if (!ix.has(w, kCommWait) || (t.track[w] != ix.main_thread && t.track[w] != ix.step_thread)) return;
    const std::vector<Interval> idle = ix.idle_gaps_in_steps(std::max(begin, t.ts[w]), std::min(end, t.end(w)));
    if (idle.empty()) return;
    waited.insert(waited.end(), idle.begin(), idle.end());
    if (longest_wait == kNoEvent || t.dur[w] > t.dur[longest_wait]) longest_wait = w;
  });
  waited = merge_intervals(std::move(waited));
  const int64_t wait_idle = total_length(waited);
  exposed += wait_idle;
  const double range = static_cast<double>(end - begin);
  if (exposed < kMinExposed || static_cast<double>(exposed) / range < kExposedFireShare) return;
  RuleFinding f;
  f.id = "comm_not_overlapped";
  f.confidence = confidence_between(static_cast<double>(exposed) / range, kExposedFireShare, kExposedStrongShare);
  f.cost = exposed;
  std::map<std::string, int64_t> by_kernel, by_op, by_type;
  // Collectives running in the range (one that began before it too: it is what is exposed
  // there), most exposed first, each by its exposed time inside the range.
  std::vector<std::pair<int64_t, EventId>> kernels;
  for (size_t i : ix.gpu_overlapping(begin, end)) {
    const EventId g = ix.gpu[i];
    if (!ix.on_primary(g) || !ix.has(g, kCommKernel) || t.track_of(g).stream == ix.compute_stream) continue;
    const int64_t ex = total_length(uncovered(ix.compute, std::max(t.ts[g], begin), std::min(t.end(g), end)));
    kernels.emplace_back(ex, g);
    by_kernel[readable_kernel_name(t.name_of(g))] += ex;
    // A collective whose launch the trace does not hold (it began before the record, or on a
    // thread not recorded) names no op: not its own kernel as the issuer.
    if (ix.tree.owner_op(g) != kNoEvent) by_op[comm_op(ix, g)] += ex;
    by_type[collective_type_of(t, ix.tree, g)] += ex;
  }
  std::stable_sort(kernels.begin(), kernels.end(), [](auto& a, auto& b) { return a.first > b.first; });
  for (auto& [ex, g] : kernels) f.events.push_back(g);
  if (exposed > wait_idle)
    f.evidence.push_back(fmt::format("collective kernels busy {} in the range, {} of it ({} of the range) with no compute "
                                     "kernel running",
                                     dur_text(covered(ix.comm_side, begin, end)), dur_text(exposed - wait_idle),
                                     pct_text(static_cast<double>(exposed - wait_idle) / range)));
  if (!by_kernel.empty())
    f.evidence.push_back("exposed: " + top_text(by_kernel) +
                         (by_op.empty() ? "; its launch is not in the trace" : "; issued by " + top_text(by_op)));
  if (wait_idle > 0) {
    const EventId issued = collective_before(ix, longest_wait);
    f.evidence.push_back(fmt::format("GPU idle {} ({} of the range) while {} waits in {} ({}) for {}, launching nothing",
                                     dur_text(wait_idle), pct_text(static_cast<double>(wait_idle) / range),
                                     t.track[longest_wait] == ix.step_thread && ix.step_thread != ix.main_thread
                                         ? "the training loop's thread"
                                         : "the main thread",
                                     t.name_of(longest_wait), dur_text(t.dur[longest_wait]),
                                     issued == kNoEvent ? std::string("a collective")
                                                        : fmt::format("the {} it issued {} before", t.name_of(issued),
                                                                      dur_text(t.ts[longest_wait] - t.ts[issued]))));
    f.events.push_back(longest_wait);
    where.insert(where.end(), waited.begin(), waited.end());
    out.explained_idle.insert(out.explained_idle.end(), waited.begin(), waited.end());
  }
  // It shows where its cost lies, inside the range: the collectives' exposed time and the idle
  // of the waits (a collective running before or past the range shows there as another range's).
  f.spans = merge_intervals(std::move(where));
  set_span(t, f);
  f.locations = user_locations(ix, f.events);
  const std::string what = by_op.empty() ? std::string("the collectives") : top_text(by_op).substr(0, top_text(by_op).find(' '));
  // DDP's buckets issue only its gradients' all-reduce: bucket_cap_mb does nothing for an
  // all-gather or all-to-all the same job issues itself (sharded embeddings, ZeRO), which
  // hta_sampled_rank0's DDP job exposes as c10d::_allgather_base_, nor for torchrec's
  // embedding all-to-all (SendRecv kernels under record_param_comms). The type is the
  // collective's (collectives.cpp), of the kernels most exposed, else of the op the host
  // waits on; with neither, the advice stays DDP's.
  std::string type = top_key(by_type);
  if (type.empty() && wait_idle > 0)
    if (const EventId issued = collective_before(ix, longest_wait); issued != kNoEvent)
      type = collective_type(t.name_of(issued));  // c10d::allreduce_ is allreduce
  const bool ddp_collective = type.empty() || type == "allreduce";
  f.fix = ddp_trace(t) && ddp_collective
              ? fmt::format("let DDP overlap {} with the backward: lower bucket_cap_mb so the first buckets are reduced "
                            "while later layers still compute, keep find_unused_parameters=False, and avoid work that "
                            "forces a wait before backward ends",
                            what)
              : fmt::format("overlap {} with compute: issue {} asynchronously (async_op=True) as soon as {} input is "
                            "ready and wait only where the result is used; with FSDP enable forward/backward prefetch",
                            what, by_op.empty() ? "them" : "it", by_op.empty() ? "their" : "its");
  out.findings.push_back(std::move(f));
}

void detect_comm_blocks_compute(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  if (ix.comm.empty() || ix.compute_stream < 0) return;
  int64_t on_compute = 0, waited = 0;
  size_t waits = 0;
  RuleFinding f;
  std::map<std::string, int64_t> by_comm;
  EventId example_comm = kNoEvent, example_waiter = kNoEvent;
  int64_t example_ns = 0;
  int64_t comm_stream = -1;
  auto [lo, hi] = ix.gpu_range(begin, end);
  for (size_t i = lo; i < hi; ++i) {
    const EventId g = ix.gpu[i];
    if (!ix.on_primary(g) || !ix.has(g, kCommKernel)) continue;
    const int64_t gb = t.ts[g], ge = t.end(g);
    if (t.track_of(g).stream == ix.compute_stream) {  // the collective occupies the compute stream itself
      on_compute += overlap(gb, ge, begin, end);  // a collective running past the range costs the next one too
      by_comm[comm_op(ix, g)] += t.dur[g];
      f.events.push_back(g);
      continue;
    }
    // The compute stream idles during the collective, and its next kernel, launched before
    // the collective ended, starts right when it ends: it was made to wait for it.
    const int64_t idle = (ge - gb) - covered(ix.compute_stream_busy, gb, ge);
    if (idle * 2 < ge - gb) continue;
    auto [k, kend] = ix.gpu_range(ge - kResumeSlack, ge + kResumeSlack + ix.launch_latency);
    for (; k < kend; ++k) {
      const EventId c = ix.gpu[k];
      const EventId l = ix.tree.launcher(c);
      if (t.track_of(c).stream != ix.compute_stream || t.track_of(c).device != ix.device || l == kNoEvent) continue;
      if (t.category[c] != Category::Kernel || ix.has(c, kCommKernel)) continue;
      if (t.ts[l] + ix.launch_latency + kResumeSlack < ge && t.ts[c] >= ge - kResumeSlack) {
        // Judged on the whole wait, counted where it falls in the range.
        const int64_t cb = std::max(gb, begin), ce = std::min(ge, end);
        waited += ce > cb ? (ce - cb) - covered(ix.compute_stream_busy, cb, ce) : 0;
        ++waits;
        comm_stream = t.track_of(g).stream;
        by_comm[comm_op(ix, g)] += idle;
        f.events.push_back(g);
        f.events.push_back(c);
        if (idle > example_ns) example_ns = idle, example_comm = g, example_waiter = c;
      }
      break;
    }
  }
  const int64_t blocked = on_compute + waited;
  const double range = static_cast<double>(end - begin);
  if (blocked < kMinBlocked || static_cast<double>(blocked) / range < kBlockedFireShare) return;
  f.id = "comm_blocks_compute";
  f.confidence = confidence_between(static_cast<double>(blocked) / range, kBlockedFireShare, kBlockedStrongShare);
  f.cost = blocked;
  set_span(t, f);
  if (on_compute > 0)
    f.evidence.push_back(fmt::format("collectives run {} on compute stream {} itself", dur_text(on_compute),
                                     ix.compute_stream));
  if (waits > 0) {
    f.evidence.push_back(fmt::format("compute stream {} idles {} in the range in {} on collectives on stream {}: kernels "
                                     "already launched start only when the collective ends",
                                     ix.compute_stream, dur_text(waited), count_text(waits, "wait"), comm_stream));
    f.evidence.push_back(fmt::format("e.g. {} ({}) held {} by {} ({})", comm_op(ix, example_waiter),
                                     dur_text(t.dur[example_waiter]), dur_text(example_ns),
                                     readable_kernel_name(t.name_of(example_comm)), dur_text(t.dur[example_comm])));
  }
  f.evidence.push_back("collectives: " + top_text(by_comm));
  f.locations = user_locations(ix, f.events);
  f.fix = on_compute > 0
              ? "run collectives on their own stream (the process group's NCCL stream, not torch.cuda.current_stream()) "
                "so compute can proceed while they transfer"
              : fmt::format("wait late: issue {} with async_op=True and call work.wait() only right before its result "
                            "is needed, so independent compute is not queued behind it{}",
                            top_text(by_comm).substr(0, top_text(by_comm).find(' ')),
                            ddp_trace(t) ? "; for DDP, do not synchronize on gradients before the optimizer needs them"
                                         : "");
  out.findings.push_back(std::move(f));
}

}  // namespace ttap::rules
