// The optimizer's share of a step: per-parameter update loops (optimizer_single_tensor)
// and gradients zeroed with kernels (grad_not_set_to_none).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "rule_index.hpp"

namespace ttap::rules {

namespace {

// A per-parameter loop launches a few kernels per parameter; a foreach/fused optimizer
// launches a handful per step. 24 kernels in one optimizer step (8 parameters' worth of
// SGD with momentum) fire, 200 are certain.
constexpr double kOptFireKernels = 24;
constexpr double kOptStrongKernels = 200;
// Below this share of multi_tensor_apply kernels the step is a per-parameter loop.
constexpr double kMaxMultiTensorShare = 0.10;
// A step whose launch calls take at least this share of it is a loop of launches, judged
// whole from any range inside it (PARAM DLRM's Adagrad: 64 kernels, 287 us of calls in
// 1.4 ms); a step that launches a few kernels amid other work (a 190 ms Shampoo step with
// 31) is judged by the kernels in the range only.
constexpr double kLoopCallShare = 0.05;
// zero_grad: 8 fill/memset kernels fire (one per gradient), 100 are certain.
constexpr double kZeroFireKernels = 8;
constexpr double kZeroStrongKernels = 100;
// A foreach zero_grad (torch 2.x with a foreach optimizer) fills every gradient in one or two
// aten::_foreach_zero_ launches: with set_to_none=True it launches nothing at all, so any
// such launch is the pattern; the cost, not the kernel count, says how much it matters.
constexpr double kForeachZeroConfidence = 0.8;

struct Launched {
  std::vector<EventId> gpu;      // GPU work launched from the span, same thread, within the range
  size_t multi_tensor = 0;
  int64_t call_time = 0;         // host time of the launch calls
  std::map<std::string, int> by_op;
  const char* unit = "kernels";  // what `gpu` holds
};

// On a CPU-only trace nothing is launched: the span's outermost math ops within the range
// are its work (one aten::add_ per parameter where a GPU would run one kernel). Other calls
// are not counted: torch 1.13's foreach AdamW reads each step count with aten::item.
Launched called_from(const RuleIndex& ix, EventId span, int64_t b, int64_t e) {
  const Trace& t = ix.t;
  Launched out;
  out.unit = "ops";
  ix.cpu_ops.each_overlapping(t, std::max(b, t.ts[span]), std::min(e, t.end(span)), [&](EventId op) {
    if (t.track[op] != t.track[span] || t.ts[op] < std::max(b, t.ts[span]) || t.end(op) > t.end(span)) return;
    for (EventId p = ix.tree.parent(op); p != kNoEvent && p != span; p = ix.tree.parent(p))
      if (t.category[p] == Category::CpuOp) return;  // inside another op of the span
    const OpCategory c = categorize_op(t.name_of(op));
    if (c != OpCategory::elementwise && c != OpCategory::reduce && c != OpCategory::multi_tensor_apply) return;
    out.gpu.push_back(op);
    out.call_time += t.dur[op];
    if (categorize_op(t.name_of(op)) == OpCategory::multi_tensor_apply) ++out.multi_tensor;
    ++out.by_op[std::string(t.name_of(op))];
  });
  return out;
}

Launched launched_from(const RuleIndex& ix, EventId span, int64_t b, int64_t e) {
  const Trace& t = ix.t;
  Launched out;
  auto [lo, hi] = ix.launch_range(std::max(b, t.ts[span]), std::min(e, t.end(span)));
  for (size_t k = lo; k < hi; ++k) {
    const uint32_t i = ix.launch_gpu[k];
    const EventId g = ix.gpu[i];
    const EventId l = ix.tree.launcher(g);
    if (t.track[l] != t.track[span]) continue;
    out.gpu.push_back(g);
    out.call_time += t.dur[l];
    if (ix.has(g, kMultiTensorKernel) || ix.gpu_cat[i] == OpCategory::multi_tensor_apply) ++out.multi_tensor;
    const EventId op = ix.tree.owner_op(g);
    ++out.by_op[op == kNoEvent ? std::string("(no op)") : std::string(t.name_of(op))];
  }
  return out;
}

Launched work_of(const RuleIndex& ix, EventId span, int64_t b, int64_t e) {
  return ix.gpu.empty() ? called_from(ix, span, b, e) : launched_from(ix, span, b, e);
}

// "(1.77 ms here)" for a span inside the range; for one that runs past it, whose launches are
// counted whole, its whole length too: "(25.5 ms in all, 1.77 ms here) ran 1136 kernels",
// not a count of the whole step beside the range's slice of it alone.
std::string span_length_text(const Trace& t, EventId span, int64_t b, int64_t e) {
  if (t.dur[span] == e - b) return dur_text(e - b) + " here";
  return fmt::format("{} in all, {} here", dur_text(t.dur[span]), dur_text(e - b));
}

std::string ops_text(const std::map<std::string, int>& by_op) {
  std::vector<std::pair<int, std::string>> v;
  for (auto& [k, n] : by_op) v.emplace_back(n, k);
  std::sort(v.rbegin(), v.rend());
  std::string s;
  for (size_t i = 0; i < v.size() && i < 3; ++i)
    s += fmt::format("{}{} x{}", i ? ", " : "", v[i].second == "(no op)" ? "outside any op" : v[i].second, v[i].first);
  return s;
}

// "Optimizer.step#SGD.step" -> "SGD".
std::string optimizer_class(std::string_view name) {
  const size_t hash = name.find('#');
  if (hash == std::string_view::npos) return "the optimizer";
  std::string_view c = name.substr(hash + 1);
  return std::string(c.substr(0, c.find('.')));
}

// The optimizers torch.optim itself provides, and which of them take fused=True (torch 2.x;
// Adagrad's fused path is newer and CPU-only in places, so it is not offered). LBFGS and
// SparseAdam have no multi-tensor path at all.
bool in_torch_optim(std::string_view cls) {
  for (std::string_view c : {"SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "RMSprop",
                             "Rprop"})
    if (cls == c) return true;
  return false;
}
bool has_fused(std::string_view cls) { return cls == "SGD" || cls == "Adam" || cls == "AdamW"; }

// The fix names only constructors that exist: torch.optim's own classes with their
// foreach/fused flags; for any other class (a library's Shampoo, torchrec's
// CombinedOptimizer, an EMA wrapper) the library's own multi-tensor option, in general words.
// `unit` is what the step was counted in: kernels, or ops on a trace without GPU work, where
// there are no multi_tensor_apply kernels to run.
std::string optimizer_fix(const std::string& cls, size_t count, std::string_view unit) {
  const bool ops = unit == "ops";
  if (in_torch_optim(cls))
    return fmt::format("construct torch.optim.{}(..., foreach=True){} so the update runs as a few {} instead of {} "
                       "per-parameter ones",
                       cls, has_fused(cls) ? " (or fused=True)" : "", ops ? "foreach ops" : "multi_tensor_apply kernels",
                       count);
  return fmt::format("{} is not a torch.optim optimizer: turn on its library's multi-tensor or fused update (often a "
                     "foreach/fused flag or a grouped-parameter mode), or for the plain optimizers it wraps use "
                     "torch.optim's foreach=True / fused=True, so the update runs as a few batched {} instead of {} "
                     "per-parameter ones",
                     cls, unit, count);
}

// An optimizer step (or zero_grad) repeats once per training step: a range that holds several
// (the whole steady state) reports them as one finding that costs all of them. gpuzoo_0018
// (two steps, each AdamW.step 25-27 ms with the GPU idle) read "costs ~13 ms per step (14.7%
// of step time)" from one step's finding, the other's left out of the group. Calls of one name
// that overlap (a span recorded twice, one nested in another: hta_mtia's CombinedOptimizer)
// stay apart, as before.
void add_merged(std::vector<RuleFinding> found, const Trace& t, DetectorOutput& out) {
  std::map<StringId, std::vector<size_t>> by_name;
  for (size_t i = 0; i < found.size(); ++i) by_name[t.name[found[i].events.front()]].push_back(i);
  std::vector<bool> merged(found.size(), false);
  for (auto& [name, members] : by_name) {
    if (members.size() < 2) continue;
    std::sort(members.begin(), members.end(), [&](size_t a, size_t b) { return found[a].begin < found[b].begin; });
    bool disjoint = true;
    for (size_t k = 1; k < members.size(); ++k) disjoint &= found[members[k]].begin >= found[members[k - 1]].end;
    if (!disjoint) continue;
    const size_t top = *std::max_element(members.begin(), members.end(), [&](size_t a, size_t b) {
      return found[a].cost < found[b].cost;
    });
    RuleFinding f = found[top];
    f.cost = 0;
    f.spans.clear();
    f.events.clear();
    f.events.push_back(found[top].events.front());
    for (size_t i : members) {
      f.cost += found[i].cost;
      f.confidence = std::max(f.confidence, found[i].confidence);
      f.spans.emplace_back(found[i].begin, found[i].end);
      if (i != top) f.events.push_back(found[i].events.front());
      merged[i] = true;
    }
    f.begin = f.spans.front().first;
    f.end = f.spans.back().second;
    for (size_t i : members)
      f.events.insert(f.events.end(), found[i].events.begin() + 1, found[i].events.end());
    f.evidence.insert(f.evidence.begin(), fmt::format("{} in the range cost {} in all; the costliest of them:",
                                                      count_text(members.size(), std::string(t.strings.view(name)) + " call"),
                                                      dur_text(f.cost)));
    out.findings.push_back(std::move(f));
  }
  for (size_t i = 0; i < found.size(); ++i)
    if (!merged[i]) out.findings.push_back(std::move(found[i]));
}

}  // namespace

void detect_optimizer_single_tensor(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  std::vector<RuleFinding> found;
  ix.optimizer.each_overlapping(t, begin, end, [&](EventId span) {
    const std::string_view name = t.name_of(span);
    if (name.find("Fused") != std::string_view::npos) return;  // fused optimizers batch by construction
    // A short range inside the step sees a few of its per-parameter kernels, too few to tell
    // a loop from a batched update: a step whose launch calls fill a good part of it (a loop
    // of launches) is judged whole. Its cost is what lies in the range.
    const Launched in_range = work_of(ix, span, begin, end);
    const Launched whole = work_of(ix, span, t.ts[span], t.end(span));
    const bool loop = static_cast<double>(whole.call_time) >= kLoopCallShare * static_cast<double>(t.dur[span]);
    const Launched& l = loop ? whole : in_range;
    const double n = static_cast<double>(l.gpu.size());
    if (n < kOptFireKernels || static_cast<double>(l.multi_tensor) > kMaxMultiTensorShare * n) return;
    const int64_t b = std::max(begin, t.ts[span]), e = std::min(end, t.end(span));
    const int64_t idle = (e - b) - covered(ix.busy, b, e);
    std::vector<int64_t> durs;
    for (EventId g : l.gpu) durs.push_back(t.dur[g]);
    std::nth_element(durs.begin(), durs.begin() + static_cast<std::ptrdiff_t>(durs.size() / 2), durs.end());
    RuleFinding f;
    f.id = "optimizer_single_tensor";
    f.confidence = confidence_between(n, kOptFireKernels, kOptStrongKernels);
    f.cost = std::min(e - b, std::max(in_range.call_time, idle));
    f.begin = b;
    f.end = e;
    f.events.push_back(span);
    f.events.insert(f.events.end(), l.gpu.begin(), l.gpu.begin() + std::min<size_t>(l.gpu.size(), 64));
    f.evidence.push_back(fmt::format("{} ({}) ran {} {}, {} of them multi-tensor (foreach/fused); median {}, "
                                     "{} in the calls",
                                     name, loop ? span_length_text(t, span, b, e) : dur_text(e - b) + " here",
                                     l.gpu.size(), l.unit, l.multi_tensor,
                                     dur_text(durs[durs.size() / 2]), dur_text(l.call_time)));
    f.evidence.push_back(ix.gpu.empty() ? "calls: " + ops_text(l.by_op)
                                        : fmt::format("launching ops: {}; GPU idle {} during the step in the range", ops_text(l.by_op),
                                                      dur_text(idle)));
    f.locations = user_locations(ix, {span});
    f.fix = optimizer_fix(optimizer_class(name), l.gpu.size(), l.unit);
    // The GPU waiting on this span's host work is explained by it.
    for (auto iv : ix.idle_gaps(b, e)) out.explained_idle.push_back(iv);
    found.push_back(std::move(f));
  });
  add_merged(std::move(found), t, out);
}

void detect_grad_not_set_to_none(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  std::vector<RuleFinding> found;
  ix.zero_grad.each_overlapping(t, begin, end, [&](EventId span) {
    // Judged whole, as the optimizer step: a range inside zero_grad sees a few of its fills.
    const Launched l = work_of(ix, span, t.ts[span], t.end(span));
    const double n = static_cast<double>(l.gpu.size());
    const auto foreach_zero = l.by_op.find("aten::_foreach_zero_");
    const bool fused = foreach_zero != l.by_op.end() && foreach_zero->second > 0;
    if (n < kZeroFireKernels && !fused) return;
    const int64_t b = std::max(begin, t.ts[span]), e = std::min(end, t.end(span));
    int64_t gpu_time = 0;
    for (EventId g : l.gpu) gpu_time += t.dur[g];
    RuleFinding f;
    f.id = "grad_not_set_to_none";
    f.confidence = std::max(n < kZeroFireKernels ? 0.0 : confidence_between(n, kZeroFireKernels, kZeroStrongKernels),
                            fused ? kForeachZeroConfidence : 0.0);
    f.cost = e - b;  // with set_to_none the call only drops references
    f.begin = b;
    f.end = e;
    f.events.push_back(span);
    f.events.insert(f.events.end(), l.gpu.begin(), l.gpu.begin() + std::min<size_t>(l.gpu.size(), 64));
    f.evidence.push_back(fmt::format("{} ({}) ran {} ({}) to zero gradients: {}", t.name_of(span),
                                     span_length_text(t, span, b, e),
                                     fmt::format("{} {}", l.gpu.size(),
                                                 ix.gpu.empty() ? (l.gpu.size() == 1 ? "op" : "ops")
                                                                : (l.gpu.size() == 1 ? "kernel/memset" : "kernels/memsets")),
                                     dur_text(gpu_time),
                                     ops_text(l.by_op)));
    f.locations = user_locations(ix, {span});
    // A foreach launch zeroes many gradients at once: its kernel count is no gradient count.
    f.fix = fused ? std::string("call optimizer.zero_grad(set_to_none=True) (the default since torch 2.0): the gradients "
                                "are then dropped instead of filled with zeros by aten::_foreach_zero_, and the backward "
                                "writes them fresh")
                  : fmt::format("call optimizer.zero_grad(set_to_none=True) (the default since torch 2.0): the {} gradients "
                                "are then dropped instead of filled with zeros, and the backward writes them fresh",
                                l.gpu.size());
    // The GPU waiting on this span's host work is explained by it.
    const std::vector<Interval> idle = ix.idle_gaps(b, e);
    if (const int64_t waited = idle_of(idle); waited > 0)
      f.evidence.push_back(fmt::format("GPU idle {} ({} of the range) while the host is in {}, launching nothing but the "
                                       "zeroing",
                                       dur_text(waited), pct_text(static_cast<double>(waited) / static_cast<double>(end - begin)),
                                       t.name_of(span)));
    for (auto iv : idle) out.explained_idle.push_back(iv);
    found.push_back(std::move(f));
  });
  add_merged(std::move(found), t, out);
}

}  // namespace ttap::rules
