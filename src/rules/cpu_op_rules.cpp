// CPU-only traces: the work a GPU would show as kernels runs as CPU ops, so the rules that
// judge kernels (cast_churn, redundant_copy, layout_conversion, unfused_elementwise) judge
// the main thread's outermost ops instead: the ops the user's code called, whose time
// includes everything they dispatched. Shares are of the time those outermost ops take in
// the range (the host may idle between them, waiting on the loader, and that is not work).
// Debian's torch 1.13 records no dtypes on the CPU, so a cast or copy is recognized by what
// it dispatched: aten::to / contiguous that find nothing to do return their input and call
// no aten::copy_.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "rule_index.hpp"

namespace ttap::rules {

namespace {

// cast_churn: at least this many copying aten::to/_to_copy calls (one per step moves the
// input batch to channels_last, which is good practice), taking 5% (fires) to 30% (certain)
// of op time.
constexpr size_t kMinCasts = 4;
constexpr double kCastFireShare = 0.05;
constexpr double kCastStrongShare = 0.30;
// redundant_copy: copying clone/contiguous calls that no convolution just produced the
// input of (those are layout_conversion's); 5% to 30% of op time.
constexpr size_t kMinCopies = 3;
constexpr double kCopyFireShare = 0.05;
constexpr double kCopyStrongShare = 0.30;
// layout_conversion: copies of a convolution's output right after it, as a share of the
// convolutions' and the copies' time: 5% fires, 30% is certain (as on the GPU).
constexpr size_t kMinConversions = 3;
constexpr double kLayoutFireShare = 0.05;
constexpr double kLayoutStrongShare = 0.30;
// unfused_elementwise: runs of at least kMinRun back-to-back elementwise calls outside the
// optimizer (a residual add and an activation are in every CNN); 10% to 40% of op time.
constexpr size_t kMinRun = 5;
constexpr double kRunFireShare = 0.10;
constexpr double kRunStrongShare = 0.40;
// cpu_bound_step: stretches inside the steps where the training thread records no event
// between two of its own top-level events (Python or native work outside torch: numpy,
// metrics, logging, or a wait), each at least kMinQuiet and a fiftieth of a median step:
// in the clean CPU runs of the corpus (train split) the interpreter's and allocator's pauses
// between two ops reach 1-2% of a step; their time in the range: 5% of it fires, 50% is
// certain, as on the GPU.
constexpr int64_t kMinQuiet = 200'000;
constexpr double kQuietStepShare = 0.02;
constexpr double kQuietFireShare = 0.05;
constexpr double kQuietStrongShare = 0.50;

// The main thread's outermost CPU ops starting in [b, e), in time order, and their time.
struct OuterOps {
  std::vector<EventId> ops;
  int64_t time = 0;
};

OuterOps outer_ops(const RuleIndex& ix, int64_t b, int64_t e) {
  OuterOps out;
  ix.cpu_ops.each_overlapping(ix.t, b, e, [&](EventId op) {
    if (ix.t.track[op] != ix.main_thread || ix.t.ts[op] < b || ix.enclosing_op(op) != kNoEvent) return;
    out.ops.push_back(op);
    out.time += ix.t.dur[op];
  });
  return out;
}

// Whether `op` copied data: an aten::copy_ anywhere below it.
bool copies(const RuleIndex& ix, EventId op) {
  for (EventId c : ix.tree.children(op))
    if (ix.t.name_of(c) == "aten::copy_" || copies(ix, c)) return true;
  return false;
}

bool in_optimizer(const RuleIndex& ix, EventId op) {
  bool inside = false;
  const auto check = [&](EventId s) { inside |= ix.t.ts[s] <= ix.t.ts[op] && ix.t.end(op) <= ix.t.end(s); };
  ix.optimizer.each_overlapping(ix.t, ix.t.ts[op], ix.t.end(op), check);
  ix.zero_grad.each_overlapping(ix.t, ix.t.ts[op], ix.t.end(op), check);
  return inside;
}

bool is_conv(const RuleIndex& ix, EventId op) {
  const OpCategory c = categorize_op(ix.t.name_of(op));
  return c == OpCategory::CONV_fwd || c == OpCategory::CONV_bwd;
}

// The copying clone/contiguous/to calls, split by whether a convolution's output is what
// they copy (the call right before them on the thread is a convolution).
struct Calls {
  std::vector<EventId> ops;
  int64_t time = 0;
  void add(const RuleIndex& ix, EventId op) { ops.push_back(op), time += ix.t.dur[op]; }
};
struct Copies {
  Calls after_conv, casts, other;
  int64_t conv_time = 0;
};

Copies copies_in(const RuleIndex& ix, const OuterOps& outer) {
  Copies c;
  for (size_t i = 0; i < outer.ops.size(); ++i) {
    const EventId op = outer.ops[i];
    if (is_conv(ix, op)) c.conv_time += ix.t.dur[op];
    const bool clone = ix.has(op, kCloneOp), cast = ix.has(op, kCastOp);
    if (!(clone || cast) || !copies(ix, op)) continue;
    if (i > 0 && is_conv(ix, outer.ops[i - 1])) c.after_conv.add(ix, op);
    else if (cast) c.casts.add(ix, op);
    else c.other.add(ix, op);
  }
  return c;
}

std::string count_by_name(const RuleIndex& ix, const std::vector<EventId>& ops) {
  std::map<std::string_view, int> n;
  for (EventId op : ops) ++n[ix.t.name_of(op)];
  std::string s;
  for (auto& [name, k] : n) s += fmt::format("{}{} x{}", s.empty() ? "" : ", ", name, k);
  return s;
}

// Events capped as the other detectors cap them, the span they cover, their user code.
void finish(const RuleIndex& ix, RuleFinding& f) {
  // The calls past the 256 kept as events still hold the cost: they stay where it lies
  // (cpu_zoo's zoo_0008 listed 153 ms of places for 306 ms of casts across its steady state).
  if (f.events.size() > 256 && f.spans.empty()) {
    for (EventId e : f.events) f.spans.emplace_back(ix.t.ts[e], ix.t.end(e));
    f.spans = merge_intervals(std::move(f.spans));
  }
  if (f.events.size() > 256) f.events.resize(256);
  set_span(ix.t, f);
  f.locations = user_locations(ix, f.events);
}

// The main thread's outermost op running at `at` that began before it, or kNoEvent.
EventId outer_op_across(const RuleIndex& ix, int64_t at) {
  EventId found = kNoEvent;
  ix.cpu_ops.each_overlapping(ix.t, at, at + 1, [&](EventId op) {
    if (ix.t.track[op] == ix.main_thread && ix.t.ts[op] < at && ix.enclosing_op(op) == kNoEvent) found = op;
  });
  return found;
}

// Whether a copying call's length is plausibly its copy: at least kMinCopyRate elements of
// its first input per microsecond. A CPU copies hundreds of elements per microsecond even
// with Debian's reference build (the zoo's fp16 weight casts: 35-85); a 4.94 ms aten::to of
// 123 integers (hta_no_distributed_info) spent its time on something else, a wait or the
// allocator, and is no cast work. Unknown without recorded shapes.
constexpr int64_t kMinCopyRate = 1;
bool copying_its_length(const RuleIndex& ix, EventId op) {
  const OpArgs* a = ix.t.op(op);
  if (a == nullptr) return false;
  const std::vector<int64_t> dims = first_ints(ix.t.strings.view(a->input_dims));
  if (dims.empty()) return false;
  double elements = 1;  // a double: a hostile trace's dims could overflow an integer product
  for (int64_t d : dims) elements *= static_cast<double>(d);
  return elements * 1000.0 >= static_cast<double>(kMinCopyRate) * static_cast<double>(ix.t.dur[op]);
}

// A range that lies mostly inside one long copying call begun before it holds too few calls
// of its own to show a loop: a 6 ms window inside one 62 ms aten::to of a weight cast
// (deeplabv3's classifier, `p.to(torch.float16)` over every parameter each step) saw no
// op start at all. Such a call is judged with the calls around it, over its own length on
// either side: when those hold a loop of this group's calls (at least `min_calls`, at
// least `fire` of the op time there), the range's part of the calls is the pattern's.
// Returns the calls crossing or starting in the range, empty when there is no such loop;
// `context` gets the calls counted around it.
Calls loop_across_start(const RuleIndex& ix, int64_t begin, int64_t end, Calls Copies::*group, size_t min_calls,
                        double fire, Calls& context) {
  const EventId across = outer_op_across(ix, begin);
  if (across == kNoEvent || !(ix.has(across, kCastOp) || ix.has(across, kCloneOp)) || !copying_its_length(ix, across))
    return {};
  const int64_t reach = ix.t.dur[across];
  const OuterOps around = outer_ops(ix, ix.t.ts[across] - reach, std::max(end, ix.t.end(across)) + reach);
  if (around.time == 0) return {};
  context = copies_in(ix, around).*group;
  const bool in_group = std::find(context.ops.begin(), context.ops.end(), across) != context.ops.end();
  const double share = static_cast<double>(context.time) / static_cast<double>(around.time);
  if (!in_group || context.ops.size() < min_calls || share < fire) return {};
  Calls here;
  for (EventId op : context.ops)
    if (op == across || (ix.t.ts[op] >= begin && ix.t.ts[op] < end)) here.add(ix, op);
  return here;
}

// The finding for a range judged by loop_across_start: what the range holds of the loop's
// calls (`here`, the first one running across the range's start), against the main
// thread's op time in the range, each clipped to it; the cost is that part alone.
void across_finding(const RuleIndex& ix, int64_t begin, int64_t end, const char* id, const Calls& here,
                    const Calls& context, double fire, double strong, std::string_view what,
                    std::string (*fix)(const RuleFinding&), DetectorOutput& out) {
  const Trace& t = ix.t;
  const EventId across = here.ops.front();
  int64_t calls_inside = 0, ops_inside = overlap(t.ts[across], t.end(across), begin, end);
  for (EventId op : here.ops) calls_inside += overlap(t.ts[op], t.end(op), begin, end);
  for (EventId op : outer_ops(ix, begin, end).ops) ops_inside += overlap(t.ts[op], t.end(op), begin, end);
  // Only a range that is mostly that call: one where it just spills over the edge holds
  // calls of its own to be judged by (copy_finding).
  if (ops_inside == 0 || 2 * overlap(t.ts[across], t.end(across), begin, end) < ops_inside) return;
  const double share = static_cast<double>(calls_inside) / static_cast<double>(ops_inside);
  if (share < fire) return;
  RuleFinding f;
  f.id = id;
  f.confidence = confidence_between(share, fire, strong);
  f.cost = calls_inside;
  f.events = here.ops;
  finish(ix, f);
  f.evidence.push_back(fmt::format("the range begins inside {} ({}, from {} before the range start), one of {} {} "
                                   "that take {} within its own length on either side",
                                   t.name_of(across), dur_text(t.dur[across]), dur_text(begin - t.ts[across]),
                                   context.ops.size(), what, dur_text(context.time)));
  f.evidence.push_back(fmt::format("{} of them in the range: {}, {} of the op time on the main thread in the range",
                                   here.ops.size(), dur_text(calls_inside), pct_text(share)));
  f.evidence.push_back("calls: " + count_by_name(ix, context.ops));
  f.fix = fix(f);
  out.findings.push_back(std::move(f));
}

// How cast_churn and redundant_copy read a CPU-only trace: one group of copying calls,
// judged by its share of the main thread's op time in [begin, end). `what` names the calls.
void copy_finding(const RuleIndex& ix, int64_t begin, int64_t end, const char* id, Calls Copies::*group,
                  size_t min_calls, double fire, double strong, std::string_view what,
                  std::string (*fix)(const RuleFinding&), DetectorOutput& out) {
  const OuterOps outer = outer_ops(ix, begin, end);
  const Calls calls = outer.time > 0 ? copies_in(ix, outer).*group : Calls{};
  const double share = outer.time > 0 ? static_cast<double>(calls.time) / static_cast<double>(outer.time) : 0.0;
  if (calls.ops.size() < min_calls || share < fire) {
    Calls context;
    const Calls here = loop_across_start(ix, begin, end, group, min_calls, fire, context);
    if (!here.ops.empty()) across_finding(ix, begin, end, id, here, context, fire, strong, what, fix, out);
    return;
  }
  RuleFinding f;
  f.id = id;
  f.confidence = confidence_between(share, fire, strong);
  f.cost = calls.time;
  f.events = calls.ops;
  finish(ix, f);
  f.evidence.push_back(fmt::format("{} {} take {}, {} of the op time on the main thread in the range", calls.ops.size(),
                                   what, dur_text(calls.time), pct_text(share)));
  f.evidence.push_back("calls: " + count_by_name(ix, calls.ops));
  f.fix = fix(f);
  out.findings.push_back(std::move(f));
}

// A link of an elementwise chain on the main thread: an elementwise call that is no cast,
// copy or clone (those are cast_churn's and redundant_copy's) and not the optimizer's.
bool chain_link(const RuleIndex& ix, EventId op) {
  return categorize_op(ix.t.name_of(op)) == OpCategory::elementwise && !ix.has(op, kCastOp | kCloneOp) &&
         ix.t.name_of(op) != "aten::copy_" && !in_optimizer(ix, op);
}

// "aten::mul -> aten::add": a chain's first six calls.
std::string chain_text(const RuleIndex& ix, const std::vector<EventId>& chain) {
  std::string s;
  for (size_t i = 0; i < chain.size() && i < 6; ++i) s += fmt::format("{}{}", i ? " -> " : "", ix.t.name_of(chain[i]));
  return s;
}
std::string more_text(const std::vector<EventId>& chain) { return chain.size() > 6 ? " -> ..." : ""; }

// A range that begins inside a long link of an elementwise chain holds too few links of its
// own to show the chain: two 3-5 ms multiplies and adds over a [4, 3, 160, 160] input
// (ResNet-18 inference on the CPU, a 3 ms window) left the rules silent. The chain is taken
// whole, the links back to back with the one running across the range's start, within its
// step, and counted where it runs: its links' time inside the range, against the main
// thread's op time there; its cost there is that time's share of what fusing saves (all but
// the slowest link).
void chain_across_start(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  const EventId across = outer_op_across(ix, begin);
  if (across == kNoEvent || !chain_link(ix, across)) return;
  const Step* step = nullptr;
  for (const Step& s : ix.tree.steps())
    if (s.ts <= t.ts[across] && begin < s.end) step = &s;
  if (step == nullptr) return;
  const std::vector<EventId> ops = outer_ops(ix, step->ts, step->end).ops;
  const auto at = std::find(ops.begin(), ops.end(), across);
  if (at == ops.end()) return;
  auto lo = at, hi = at + 1;
  while (lo != ops.begin() && chain_link(ix, *(lo - 1))) --lo;
  while (hi != ops.end() && chain_link(ix, *hi)) ++hi;
  const std::vector<EventId> chain(lo, hi);
  if (chain.size() < kMinRun) return;
  int64_t sum = 0, slowest = 0, inside = 0, ops_inside = overlap(t.ts[across], t.end(across), begin, end);
  for (EventId op : chain) {
    sum += t.dur[op], slowest = std::max(slowest, t.dur[op]);
    inside += overlap(t.ts[op], t.end(op), begin, end);
  }
  for (EventId op : outer_ops(ix, begin, end).ops) ops_inside += overlap(t.ts[op], t.end(op), begin, end);
  if (sum == 0 || ops_inside == 0) return;
  const double share = static_cast<double>(inside) / static_cast<double>(ops_inside);
  if (share < kRunFireShare) return;
  RuleFinding f;
  f.id = "unfused_elementwise";
  f.confidence = confidence_between(share, kRunFireShare, kRunStrongShare);
  f.cost = static_cast<int64_t>(static_cast<double>(inside) * static_cast<double>(sum - slowest) / static_cast<double>(sum));
  f.events = chain;
  const std::string names = chain_text(ix, chain);
  finish(ix, f);
  f.evidence.push_back(fmt::format("the range begins inside {} ({}, from {} before the range start), one of {} "
                                   "back-to-back elementwise calls ({} in all, the slowest {})",
                                   t.name_of(across), dur_text(t.dur[across]), dur_text(begin - t.ts[across]),
                                   chain.size(), dur_text(sum), dur_text(slowest)));
  f.evidence.push_back(fmt::format("the chain's calls take {} in the range, {} of the op time on the main thread in the "
                                   "range; fused, it would take about its slowest call",
                                   dur_text(inside), pct_text(share)));
  f.evidence.push_back("chain: " + names + more_text(chain));
  f.fix = fmt::format("fuse the chain {}{} with torch.compile, or write it with in-place ops", names, at_text(f.locations));
  out.findings.push_back(std::move(f));
}

}  // namespace

void detect_cast_churn_on_cpu(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  copy_finding(ix, begin, end, "cast_churn", &Copies::casts, kMinCasts, kCastFireShare, kCastStrongShare,
               "aten::to calls that copy (a dtype or format conversion)",
               [](const RuleFinding& f) {
                 return fmt::format("cast once, outside the loop: keep the tensors in the dtype the step computes in "
                                    "instead of converting them every step{}",
                                    at_text(f.locations));
               },
               out);
}

void detect_redundant_copy_on_cpu(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  copy_finding(ix, begin, end, "redundant_copy", &Copies::other, kMinCopies, kCopyFireShare, kCopyStrongShare,
               "clone/contiguous calls that copy",
               [](const RuleFinding& f) {
                 return fmt::format("drop the copies{}: use views, in-place ops, and call .contiguous() only where a "
                                    "kernel needs it",
                                    at_text(f.locations));
               },
               out);
}

void detect_layout_conversion_on_cpu(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const OuterOps outer = outer_ops(ix, begin, end);
  const Copies c = copies_in(ix, outer);
  if (c.after_conv.ops.size() < kMinConversions || c.conv_time == 0) return;
  const double share = static_cast<double>(c.after_conv.time) / static_cast<double>(c.conv_time + c.after_conv.time);
  if (share < kLayoutFireShare) return;
  RuleFinding f;
  f.id = "layout_conversion";
  f.confidence = confidence_between(share, kLayoutFireShare, kLayoutStrongShare);
  f.cost = c.after_conv.time;
  f.events = c.after_conv.ops;
  finish(ix, f);
  f.evidence.push_back(fmt::format("{} of a convolution's output right after it take{} {}, {} of the time of the "
                                   "convolutions and the copies ({} of convolutions)",
                                   count_text(c.after_conv.ops.size(), "copy", "copies"),
                                   c.after_conv.ops.size() == 1 ? "s" : "", dur_text(c.after_conv.time), pct_text(share),
                                   dur_text(c.conv_time)));
  f.evidence.push_back("calls: " + count_by_name(ix, c.after_conv.ops));
  f.fix = "keep one memory format: model.to(memory_format=torch.channels_last) and channels_last inputs, and no "
          ".contiguous() on convolution outputs (it converts them back to NCHW)";
  out.findings.push_back(std::move(f));
}

void detect_unfused_elementwise_on_cpu(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const OuterOps outer = outer_ops(ix, begin, end);
  if (outer.time == 0) return chain_across_start(ix, begin, end, out);
  std::vector<std::vector<EventId>> runs;
  std::vector<EventId> run;
  const auto close = [&] {
    if (run.size() >= kMinRun) runs.push_back(run);
    run.clear();
  };
  for (EventId op : outer.ops) {
    if (chain_link(ix, op)) run.push_back(op);
    else close();
  }
  close();
  if (runs.empty()) return chain_across_start(ix, begin, end, out);
  int64_t run_time = 0, saved = 0;
  size_t ops = 0, longest = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    int64_t sum = 0, mx = 0;
    for (EventId op : runs[r]) sum += ix.t.dur[op], mx = std::max(mx, ix.t.dur[op]);
    run_time += sum;
    saved += sum - mx;  // fused, a chain costs about its slowest member
    ops += runs[r].size();
    if (runs[r].size() > runs[longest].size()) longest = r;
  }
  const double share = static_cast<double>(run_time) / static_cast<double>(outer.time);
  if (share < kRunFireShare) return chain_across_start(ix, begin, end, out);
  RuleFinding f;
  f.id = "unfused_elementwise";
  f.confidence = confidence_between(share, kRunFireShare, kRunStrongShare);
  f.cost = saved;
  f.events = runs[longest];
  for (size_t r = 0; r < runs.size(); ++r)
    if (r != longest) f.events.insert(f.events.end(), runs[r].begin(), runs[r].end());
  const std::string chain = chain_text(ix, runs[longest]);
  finish(ix, f);
  f.evidence.push_back(fmt::format("{} runs of at least {} back-to-back elementwise calls ({} calls, {}), {} of the op "
                                   "time on the main thread in the range",
                                   runs.size(), kMinRun, ops, dur_text(run_time), pct_text(share)));
  f.evidence.push_back(fmt::format("longest: {} calls: {}{}", runs[longest].size(), chain, more_text(runs[longest])));
  f.fix = fmt::format("fuse the chain {}{} with torch.compile, or write it with in-place ops", chain, at_text(f.locations));
  out.findings.push_back(std::move(f));
}

// Without a GPU the model's compute is the training thread's ops, so time in the step where
// that thread records nothing is time the model does not advance: the step waits on it as a
// GPU waits on host work. Each stretch is taken whole (from the end of the event before it
// to the start of the one after), so a short range inside a 30 ms stretch sees what it is
// part of; both neighbours must lie in the steps (a step whose work ran on other threads has
// no stretch on this one), and the first of several steps is warm-up.
void detect_cpu_bound_step_on_cpu(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  const auto& steps = ix.tree.steps();
  const SpanList& top = ix.main_top;
  if (steps.empty() || top.events.size() < 2 || ix.median_step <= 0) return;
  const int64_t min_quiet =
      std::max<int64_t>(kMinQuiet, static_cast<int64_t>(kQuietStepShare * static_cast<double>(ix.median_step)));
  const int64_t steps_b = steps.front().ts, steps_e = steps.back().end;
  struct Quiet {
    int64_t b, e;
    EventId before, after;
  };
  std::vector<Quiet> quiet;
  // Events starting before begin - max_dur end before begin: the walk starts one before them.
  size_t k = static_cast<size_t>(std::lower_bound(top.starts.begin(), top.starts.end(), begin - top.max_dur) -
                                 top.starts.begin());
  if (k > 0) --k;
  EventId before = top.events[k];
  int64_t before_end = t.end(before);
  const auto add = [&](int64_t b, int64_t e, EventId after) {
    if (e - b >= min_quiet && e > begin && t.ts[before] >= steps_b && !in_warmup_step(ix, b)) quiet.push_back({b, e, before, after});
  };
  for (++k; k < top.events.size() && before_end < end; ++k) {
    const EventId ev = top.events[k];
    if (t.ts[ev] < steps_e) add(before_end, t.ts[ev], ev);
    if (t.end(ev) > before_end) before_end = t.end(ev), before = ev;
  }
  // The last step's tail: nothing recorded from its last event to its end.
  if (k == top.events.size() && before_end < std::min(end, steps_e)) add(before_end, steps_e, kNoEvent);
  int64_t here = 0;
  for (const Quiet& q : quiet) here += overlap(q.b, q.e, begin, end);
  const double range = static_cast<double>(end - begin);
  const double share = static_cast<double>(here) / range;
  if (quiet.empty() || share < kQuietFireShare) return;
  const Quiet& longest =
      *std::max_element(quiet.begin(), quiet.end(), [](const Quiet& a, const Quiet& b) { return a.e - a.b < b.e - b.b; });
  RuleFinding f;
  f.id = "cpu_bound_step";
  f.confidence = confidence_between(share, kQuietFireShare, kQuietStrongShare);
  f.cost = here;
  f.begin = std::max(begin, quiet.front().b);
  f.end = std::min(end, quiet.back().e);
  f.events = {longest.before};
  if (longest.after != kNoEvent) f.events.push_back(longest.after);
  // Where the cost lies: the quiet stretches, not the two events around the longest (on a
  // CPU-only MobileNetV3 crop, 11.9 ms of cost listed 4.45 ms of aten::linear and the like).
  for (const Quiet& q : quiet)
    if (std::min(end, q.e) > std::max(begin, q.b)) f.spans.emplace_back(std::max(begin, q.b), std::min(end, q.e));
  f.locations = user_locations(ix, f.events);
  const std::string before_name(t.name_of(longest.before));
  const std::string after_name = longest.after == kNoEvent ? std::string("the last step's end") : std::string(t.name_of(longest.after));
  f.evidence.push_back(fmt::format("the training thread records no event for {} ({} of the range) in {} of at least {} "
                                   "inside the steps: no model compute runs then (no GPU in this trace; Python or "
                                   "native work outside torch, or a wait)",
                                   dur_text(here), pct_text(share), quiet.size() == 1 ? std::string("1 stretch") : fmt::format("{} stretches", quiet.size()),
                                   dur_text(min_quiet)));
  f.evidence.push_back(fmt::format("longest: {} ({} of a {} step) from the end of {} to {}{}",
                                   dur_text(longest.e - longest.b),
                                   pct_text(static_cast<double>(longest.e - longest.b) / static_cast<double>(ix.median_step)),
                                   dur_text(ix.median_step), before_name, longest.after == kNoEvent ? "" : "the start of ", after_name));
  f.fix = fmt::format("find the work between {} and {}{} (profile with with_stack=True to see its Python frames) and "
                      "move it off the step path (into DataLoader workers or a background thread), vectorize it in "
                      "torch, or run it every N steps",
                      before_name, after_name, at_text(f.locations));
  out.findings.push_back(std::move(f));
}

}  // namespace ttap::rules
