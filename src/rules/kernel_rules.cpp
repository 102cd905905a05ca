// How the GPU's own time is spent: unfused_elementwise, fp32_no_tensor_cores,
// layout_conversion, cast_churn, low_occupancy.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "rule_index.hpp"
#include "ttap/convolution_ops.hpp"

namespace ttap::rules {

namespace {

// Cuts kernels, longest first, to the `cap` longest and, after them, at most `cap` more from
// the ops none of those ran in: --baseline finds a finding under every op its events lie in
// (TraceReport::present_elsewhere), and kineto nw0's FP32 head matmuls (aten::mm, 275 us)
// all fall below its 256 longest convolutions.
void keep_every_op(const RuleIndex& ix, std::vector<EventId>& kernels, size_t cap) {
  if (kernels.size() <= cap) return;
  const auto op_of = [&](EventId k) {
    const EventId op = ix.tree.owner_op(k);
    return op == kNoEvent ? std::string_view{} : ix.t.name_of(op);
  };
  std::set<std::string_view> ops;
  for (size_t i = 0; i < cap; ++i) ops.insert(op_of(kernels[i]));
  size_t kept = cap;
  for (size_t i = cap; i < kernels.size() && kept < 2 * cap; ++i)
    if (!ops.contains(op_of(kernels[i]))) kernels[kept++] = kernels[i];
  kernels.resize(kept);
}

// unfused_elementwise: runs of at least kMinRun (a residual add + activation pair, or its
// backward, is in every CNN and not worth a finding) back-to-back elementwise kernels on one
// stream; their time as a share of kernel time: 10% fires, 40% is certain.
constexpr size_t kMinRun = 5;
// How many GPU events a run is followed past the range's edges, each way.
constexpr size_t kRunReach = 256;
// A run with fewer than kMinRun kernels in the range counts when it runs this share of it.
constexpr double kInsideRunShare = 0.5;
constexpr double kRunFireShare = 0.10;
constexpr double kRunStrongShare = 0.40;
// fp32_no_tensor_cores: FP32 GEMM/conv on CUDA cores as a share of kernel time: 5% fires,
// 40% is certain. Tensor cores run such math at least this much faster in practice (the
// datasheet ratio is 8-16x; memory-bound layers get far less), so the cost is the time
// beyond 1/kTensorCoreSpeedup of it.
constexpr double kFp32FireShare = 0.05;
constexpr double kFp32StrongShare = 0.40;
constexpr double kTensorCoreSpeedup = 2.0;
// Below this much FP32 GEMM/conv time (with the transposes cuDNN makes around it) in a range,
// a stray FP32 op (rotary frequencies, a loss computed in FP32 on purpose) is not a pattern.
constexpr int64_t kMinFp32Time = 20'000;
// layout_conversion: at least kMinConversions kernels, taking 5% (fires) to 30% (certain)
// of the convolution time they wrap.
constexpr size_t kMinConversions = 3;
constexpr double kLayoutFireShare = 0.05;
constexpr double kLayoutStrongShare = 0.30;
// ... or the GPU idle waiting on the host's conversions, as a share of the range: 15% fires
// (launch_bound's bar), 50% is certain.
constexpr double kLayoutIdleFireShare = 0.15;
constexpr double kLayoutIdleStrongShare = 0.50;
// cast_churn: at least kMinCasts cast kernels in the range (windows of short traces hold a
// few dozen kernels), 2% (fires) to 15% (certain) of kernel time.
constexpr size_t kMinCasts = 4;
constexpr double kCastFireShare = 0.02;
constexpr double kCastStrongShare = 0.15;
// ... or the GPU idle waiting for the casts' launches, as a share of the range: 15% fires
// (launch_bound's own bar), 50% is certain.
constexpr double kCastIdleFireShare = 0.15;
constexpr double kCastIdleStrongShare = 0.50;
// A range shorter than this (a few microseconds between two launches of a cast loop) holds
// too few casts to judge alone: the loop is judged over this much time around it (as
// launch_bound judges its kernels), the idle and the cost still in the range only.
constexpr int64_t kCastContext = 1'000'000;
// low_occupancy: kernels of at least kMinOccKernel (shorter ones are launch_bound's) with
// fewer blocks than SMs; the SM time they leave idle (1 - blocks/SMs of their duration) as
// a share of kernel time: 15% fires, 50% is certain; and at least kMinIdleSmTime of it.
constexpr int64_t kMinOccKernel = 20'000;
constexpr double kOccFireShare = 0.15;
constexpr double kOccStrongShare = 0.50;
constexpr double kMinIdleSmTime = 50'000;

std::string op_name(const RuleIndex& ix, EventId g) {
  const EventId op = ix.tree.owner_op(g);
  return op == kNoEvent ? readable_kernel_name(ix.t.name_of(g)) : std::string(ix.t.name_of(op));
}

// Compute kernels of the primary device starting in [b, e), with their positions.
template <typename F>
void each_kernel(const RuleIndex& ix, int64_t b, int64_t e, F f) {
  auto [lo, hi] = ix.gpu_range(b, e);
  for (size_t i = lo; i < hi; ++i) {
    const EventId g = ix.gpu[i];
    if (ix.t.category[g] == Category::Kernel && ix.on_primary(g) && !ix.has(g, kCommKernel)) f(i, g);
  }
}

std::string top_by_time(const std::map<std::string, int64_t>& m, size_t n) {
  std::vector<std::pair<int64_t, std::string>> v;
  for (auto& [k, ns] : m) v.emplace_back(ns, k);
  std::sort(v.rbegin(), v.rend());
  std::string s;
  for (size_t i = 0; i < v.size() && i < n; ++i) s += fmt::format("{}{} {}", i ? ", " : "", v[i].second, dur_text(v[i].first));
  return s;
}

// The k-th quoted string of a JSON list, "" when there are fewer.
std::string quoted(std::string_view s, int k) {
  size_t q = s.find('"');
  for (int i = 0; q != std::string_view::npos; ++i) {
    const size_t close = s.find('"', q + 1);
    if (close == std::string_view::npos) return "";
    if (i == k) return std::string(s.substr(q + 1, close - q - 1));
    q = s.find('"', close + 1);
  }
  return "";
}

std::string first_type(const Trace& t, EventId op) {
  const OpArgs* a = op == kNoEvent ? nullptr : t.op(op);
  if (a == nullptr) return "";
  const std::string_view s = t.strings.view(a->input_types);
  const size_t q = s.find('"');
  if (q == std::string_view::npos) return "";
  return std::string(s.substr(q + 1, s.find('"', q + 1) - q - 1));
}

// The shape of an op's first input ("[4, 3, 160, 160]"), "" when not recorded or a scalar.
std::string first_dims(const Trace& t, EventId op) {
  const OpArgs* a = op == kNoEvent ? nullptr : t.op(op);
  if (a == nullptr) return "";
  const std::string_view list = first_inner_list(t.strings.view(a->input_dims));
  return list.size() > 2 ? std::string(list) : "";
}

// The cast op (aten::to, aten::_to_copy) that op `op` is or runs under (the copy_ a cast
// launches), kNoEvent when it is no cast's.
EventId cast_of(const RuleIndex& ix, EventId op) {
  if (ix.has(op, kCastOp)) return op;
  const EventId up = ix.tree.parent(op);
  return up != kNoEvent && ix.has(up, kCastOp) ? up : kNoEvent;
}

// Whether kernel g, of category c, is FP32 GEMM/conv math on CUDA cores: a GEMM or
// convolution kernel (not one of cuDNN's NCHW<->NHWC transposes, which run under the
// convolution op but move memory, no math), not tensor-core math, whose op takes FP32 tensors
// (the kernel's name says so when the op's types are not recorded).
bool fp32_math(const RuleIndex& ix, EventId g, OpCategory c) {
  if (c != OpCategory::GEMM && c != OpCategory::CONV_fwd && c != OpCategory::CONV_bwd) return false;
  if (ix.has(g, kLayoutKernel) || ix.has(g, kTensorCoreKernel)) return false;
  const std::string type = first_type(ix.t, ix.tree.owner_op(g));
  const std::string_view n = ix.t.name_of(g);
  return type.empty() ? (n.find("sgemm") != std::string_view::npos || n.find("scudnn") != std::string_view::npos ||
                         n.find("float") != std::string_view::npos || n.find("f32") != std::string_view::npos)
                      : type == "float";
}

// cuDNN's transposes of channels_last tensors to NCHW and back around an FP32 kernel on CUDA
// cores of the same op: that FP32 kernel, kNoEvent when g is no such transpose.
// gpuzoo_0001, a channels_last ResNet-50 in FP32 with TF32 off, runs every convolution as
// nhwcToNchw, an sm80_xmma_..._nchwkcrs_nchw_..._ffma kernel, nchwToNhwc: cuDNN picks NCHW
// kernels for that FP32 math, and the zoo's bf16 runs (and h200_twin's TF32 one) get NHWC
// kernels. The op's first transpose says which way: an NCHW tensor made NHWC for the kernel
// (an NCHW model on tensor cores, h200_twin, hta_ddp_a100_nccl; V100's FP32 NHWC kernels,
// hta_ddp_cnn_v100_nsres) is one channels_last removes. Such transposes are the FP32
// finding's: its fix removes them, and layout_conversion leaves them to it.
EventId fp32_kernel_around(const RuleIndex& ix, EventId g) {
  const Trace& t = ix.t;
  const EventId op = ix.tree.owner_op(g);
  if (!ix.has(g, kLayoutKernel) || op == kNoEvent || ix.amd || (ix.compute_major > 0 && ix.compute_major < 7))
    return kNoEvent;
  EventId fp32 = kNoEvent;
  std::string_view first_transpose;
  for (EventId call : ix.tree.children(op))  // the op's own launches, in order, and their kernels
    for (EventId k : ix.tree.children(call)) {
      if (t.category[k] != Category::Kernel) continue;
      if (ix.has(k, kLayoutKernel)) {
        if (first_transpose.empty()) first_transpose = t.name_of(k);
      } else if (fp32 == kNoEvent && fp32_math(ix, k, categorize_gpu_event(t, ix.tree, k))) {
        fp32 = k;
      }
    }
  const bool into_nchw = first_transpose.find("nhwcToNchw") != std::string_view::npos ||
                         first_transpose.find("nhwc2nchw") != std::string_view::npos;
  return into_nchw ? fp32 : kNoEvent;
}

// The advice for FP32 math on CUDA cores in `what`: autocast, or TF32 where the GPU has it
// (Ampere and newer); before Ampere float16 needs a GradScaler.
std::string reduced_precision_fix(const RuleIndex& ix, const std::string& what) {
  const bool ampere = ix.compute_major >= 8;
  return fmt::format("run {} in reduced precision: wrap forward and loss in torch.autocast(\"cuda\", dtype=torch.{}){}"
                     "{}",
                     what, ampere ? "bfloat16" : "float16", ampere ? "" : " with a torch.cuda.amp.GradScaler",
                     ampere ? ", or allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True, "
                              "torch.backends.cudnn.allow_tf32 = True)"
                            : "");
}

// Whether `caller` is an op of torch's (aten::, the autograd engine's, a backward node): a cast
// or a copy made inside it is the op's own, not one the step's code asks for.
bool is_torch_op(const RuleIndex& ix, EventId caller) {
  if (caller == kNoEvent || ix.t.category[caller] != Category::CpuOp) return false;
  const std::string_view by = ix.t.name_of(caller);
  return by.starts_with("aten::") || by.starts_with("autograd::") || by.find("Backward") != std::string_view::npos;
}

}  // namespace

void detect_unfused_elementwise(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  if (ix.gpu.empty()) return detect_unfused_elementwise_on_cpu(ix, begin, end, out);  // cpu_op_rules.cpp
  const Trace& t = ix.t;
  // The GPU work the range shows is what runs in it, also kernels that began before it (a
  // chain of 19 ms elementwise kernels fills 15 ms windows none of them starts in); each run
  // is taken whole, past the range's edges on its stream, and counted where it runs in it.
  const auto elementwise = [&](size_t i) {
    return t.category[ix.gpu[i]] == Category::Kernel && ix.gpu_cat[i] == OpCategory::elementwise && !ix.gpu_in_optimizer[i];
  };
  const auto same_stream = [&](size_t i, EventId g) {
    return ix.on_primary(ix.gpu[i]) && t.track_of(ix.gpu[i]).stream == t.track_of(g).stream;
  };
  std::map<int64_t, std::vector<size_t>> open;  // stream -> current run (positions in ix.gpu)
  std::vector<std::vector<size_t>> runs;
  int64_t kernel_time = 0;  // kernel time in the range
  auto close = [&](std::vector<size_t>& run) {
    if (!run.empty()) runs.push_back(run);
    run.clear();
  };
  auto [lo, hi] = ix.gpu_range(begin - ix.gpu_max_dur, end);
  for (size_t i = lo; i < hi; ++i) {
    const EventId g = ix.gpu[i];
    if (!ix.on_primary(g) || t.end(g) <= begin) continue;
    std::vector<size_t>& run = open[t.track_of(g).stream];
    if (t.category[g] == Category::Kernel) kernel_time += overlap(t.ts[g], t.end(g), begin, end);
    if (elementwise(i)) run.push_back(i);
    else close(run);
  }
  for (auto& [s, run] : open) close(run);
  // Whole runs: back from each run's first kernel and on from its last, on its stream, while
  // the kernels stay elementwise (at most kRunReach events looked at each way).
  std::vector<std::vector<EventId>> whole;
  // Launched one by one, a chain's links keep the GPU waiting between them on the host's
  // dispatch (a microsecond of math per 20 us of Python and launch): that idle is the
  // chain's, fused it is one launch. The gaps that end at a link after the chain's first.
  const std::vector<LaunchGap> gaps = launch_gaps(ix, begin, end);
  std::vector<Interval> chain_idle, chain_between;  // chain_between: its long gaps between two links (gaps_caused_by)
  for (const std::vector<size_t>& run : runs) {
    std::vector<EventId> w;
    const EventId first = ix.gpu[run.front()], last = ix.gpu[run.back()];
    std::vector<EventId> before;
    for (size_t i = run.front(), seen = 0; i > 0 && seen < kRunReach; ++seen) {
      --i;
      if (!same_stream(i, first)) continue;
      if (!elementwise(i)) break;
      before.push_back(ix.gpu[i]);
    }
    w.assign(before.rbegin(), before.rend());
    for (size_t i : run) w.push_back(ix.gpu[i]);
    for (size_t i = run.back() + 1, seen = 0; i < ix.gpu.size() && seen < kRunReach; ++i, ++seen) {
      if (!same_stream(i, last)) continue;
      if (!elementwise(i)) break;
      w.push_back(ix.gpu[i]);
    }
    // A run counts with at least kMinRun of its kernels in the range, as before; a longer run
    // only glimpsed by the range counts when it fills most of it (the range lies inside the
    // chain), else a few kernels of a chain at a short range's edge would outrank what the
    // range itself shows.
    // The time it runs there counts the idle between its links: a launch-bound chain fills
    // the range with its waits.
    // A link is a kernel whose op takes the tensor the previous link's op took (the same
    // first input shape, recorded): a chain on one tensor, not any stream of small ops.
    const auto link = [&](size_t k) {
      const auto at = std::find(run.begin(), run.end(), k);
      if (at == run.end()) return false;
      const EventId prev = at != run.begin() ? ix.gpu[*std::prev(at)] : before.empty() ? kNoEvent : before.front();
      if (prev == kNoEvent) return false;
      const std::string dims = first_dims(t, ix.tree.owner_op(ix.gpu[k]));
      return !dims.empty() && dims == first_dims(t, ix.tree.owner_op(prev));
    };
    // A run of aten::to copies alone is no chain to fuse: each copies its own tensor (a loop
    // recasting every weight, 115 aten::copy_ kernels under aten::to on gpuzoo_0003), which is
    // cast_churn's to name and to cost.
    const auto cast = [&](EventId g) {
      const EventId op = ix.tree.owner_op(g);
      return op != kNoEvent && cast_of(ix, op) != kNoEvent;
    };
    if (std::all_of(w.begin(), w.end(), cast)) continue;
    std::vector<Interval> run_between;
    const std::vector<Interval> idle =
        w.size() >= kMinRun ? gaps_caused_by(ix, gaps, out, link, &run_between) : std::vector<Interval>{};
    int64_t here = idle_of(idle);
    for (size_t i : run) here += overlap(t.ts[ix.gpu[i]], t.end(ix.gpu[i]), begin, end);
    if (run.size() >= kMinRun || (w.size() >= kMinRun && static_cast<double>(here) >= kInsideRunShare * static_cast<double>(end - begin))) {
      whole.push_back(std::move(w));
      chain_idle.insert(chain_idle.end(), idle.begin(), idle.end());
      chain_between.insert(chain_between.end(), run_between.begin(), run_between.end());
    }
  }
  if (whole.empty() || kernel_time == 0) return;
  int64_t run_time = 0, saved = 0, all_time = 0;
  size_t kernels = 0, longest = 0;
  for (size_t r = 0; r < whole.size(); ++r) {
    int64_t sum = 0, mx = 0, here = 0;
    for (EventId g : whole[r]) sum += t.dur[g], mx = std::max(mx, t.dur[g]), here += overlap(t.ts[g], t.end(g), begin, end);
    run_time += here;
    all_time += sum;
    // Fused, a chain costs about its slowest member: the rest of it is saved, in the range
    // in proportion to the run's time there.
    saved += sum > 0 ? static_cast<int64_t>(static_cast<double>(here) * static_cast<double>(sum - mx) / static_cast<double>(sum)) : 0;
    kernels += whole[r].size();
    if (whole[r].size() > whole[longest].size()) longest = r;
  }
  const double share = static_cast<double>(run_time) / static_cast<double>(kernel_time);
  if (share < kRunFireShare) return;
  RuleFinding f;
  f.id = "unfused_elementwise";
  f.confidence = confidence_between(share, kRunFireShare, kRunStrongShare);
  const int64_t waited = idle_of(chain_idle);
  f.cost = std::min(saved + waited, end - begin);
  std::vector<EventId> all_runs;
  for (const std::vector<EventId>& w : whole) all_runs.insert(all_runs.end(), w.begin(), w.end());
  f.spans = kernels_and_idle(t, all_runs, chain_idle, begin, end);
  const std::vector<EventId>& lr = whole[longest];
  f.events = lr;
  for (size_t r = 0; r < whole.size() && f.events.size() < 256; ++r)
    if (r != longest) f.events.insert(f.events.end(), whole[r].begin(), whole[r].end());
  if (f.events.size() > 256) f.events.resize(256);
  // Where it shows is where its cost lies (the spans, inside the range), not the whole runs'
  // kernels: runs whose kernels all lie outside the range show in it only by the idle waiting
  // for their links (gpuzoo_0042).
  set_span(t, f);
  f.evidence.push_back(fmt::format("{} of at least {} back-to-back elementwise kernels ({} kernels, {}{}), {} of "
                                   "kernel time in the range",
                                   count_text(whole.size(), "run"), kMinRun, kernels, dur_text(all_time),
                                   all_time > run_time ? fmt::format(", {} of it in the range", dur_text(run_time)) : "",
                                   pct_text(share)));
  std::string chain;
  for (size_t i = 0; i < lr.size() && i < 6; ++i) chain += fmt::format("{}{}", i ? " -> " : "", op_name(ix, lr[i]));
  int64_t lr_time = 0;
  for (EventId g : lr) lr_time += t.dur[g];
  f.evidence.push_back(fmt::format("longest: {} kernels on stream {} in {}: {}{}", lr.size(), t.track_of(lr[0]).stream,
                                   dur_text(lr_time), chain, lr.size() > 6 ? " -> ..." : ""));
  if (waited > 0)
    f.evidence.push_back(fmt::format("GPU idle {} ({} of the range) in {} between the chains' kernels, each ending as "
                                     "soon as the next link's launch arrives: the host dispatches the chain op by op",
                                     dur_text(waited), pct_text(static_cast<double>(waited) / static_cast<double>(end - begin)),
                                     count_text(chain_idle.size(), "gap")));
  if (!chain_between.empty()) f.evidence.push_back(between_launches_text(chain_between, "links"));
  f.locations = user_locations(ix, f.events);
  f.fix = fmt::format("fuse the chain {}{} with torch.compile (or a fused kernel: fused norms/activations, fused "
                      "AdamW); use in-place ops where the chain must stay eager",
                      chain,
                      at_text(f.locations));
  claim_launch_gaps(chain_idle, out);
  out.findings.push_back(std::move(f));
}

void detect_fp32_no_tensor_cores(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  // The catalog's name patterns are NVIDIA's; pre-Volta GPUs have no tensor cores.
  if (ix.amd || (ix.compute_major > 0 && ix.compute_major < 7)) return;
  int64_t kernel_time = 0, matmul_time = 0, fp32_time = 0, converted_time = 0;
  std::map<std::string, int64_t> by_kernel, by_op, by_conversion;
  std::vector<EventId> conversions;  // cuDNN's transposes around the FP32 kernels (fp32_kernel_around)
  RuleFinding f;
  each_kernel(ix, begin, end, [&](size_t i, EventId g) {
    kernel_time += t.dur[g];
    // They go with the FP32 math: cuDNN's tensor-core kernels take channels_last tensors as
    // they are, so the fix removes them with it (gpuzoo_0001, 0012).
    if (fp32_kernel_around(ix, g) != kNoEvent) {
      converted_time += t.dur[g];
      by_conversion[readable_kernel_name(t.name_of(g))] += t.dur[g];
      conversions.push_back(g);
      return;
    }
    const OpCategory c = ix.gpu_cat[i];
    if (c != OpCategory::GEMM && c != OpCategory::CONV_fwd && c != OpCategory::CONV_bwd) return;
    // cuDNN's other NCHW<->NHWC transposes: layout_conversion's, never FP32 math.
    if (ix.has(g, kLayoutKernel)) return;
    matmul_time += t.dur[g];
    if (!fp32_math(ix, g, c)) return;
    fp32_time += t.dur[g];
    by_kernel[readable_kernel_name(t.name_of(g))] += t.dur[g];
    if (const EventId op = ix.tree.owner_op(g); op != kNoEvent) by_op[std::string(t.name_of(op))] += t.dur[g];
    f.events.push_back(g);
  });
  if (kernel_time == 0 || f.events.empty()) return;
  const double share = static_cast<double>(fp32_time) / static_cast<double>(kernel_time);
  // The conversions count toward the bar: they are cuDNN's around FP32 convolutions only, not a
  // stray FP32 op's, and no other finding names them (gpuzoo_0012's window 88: 17 us of FP32
  // convolutions and 5.8 us of their transposes).
  if (share < kFp32FireShare || fp32_time + converted_time < kMinFp32Time) return;
  f.id = "fp32_no_tensor_cores";
  f.confidence = confidence_between(share, kFp32FireShare, kFp32StrongShare);
  if (ix.compute_major == 0) f.confidence *= 0.8;  // no deviceProperties: Volta or newer assumed
  // The fix removes the conversions whole; at most the range (gpuzoo_0001's window 64 starts
  // 579 us of FP32 convolutions and 74 us of their conversions in 346 us).
  f.cost = std::min(static_cast<int64_t>(static_cast<double>(fp32_time) * (1.0 - 1.0 / kTensorCoreSpeedup)) + converted_time,
                    end - begin);
  // With conversions, where the cost lies is the math kernels' time and theirs (all of them:
  // the events are cut below), each whole, as the cost counts it (and the events' spans did
  // without them). No launch gaps: cuDNN launches its transposes inside the convolution's
  // dispatch, whose host time the gap would hold without them (layout_conversion leaves them
  // out for the same reason).
  if (!conversions.empty()) {
    std::vector<EventId> kernels = f.events;
    kernels.insert(kernels.end(), conversions.begin(), conversions.end());
    f.spans = kernels_and_idle(t, kernels, {}, begin, std::numeric_limits<int64_t>::max());
  }
  std::stable_sort(f.events.begin(), f.events.end(), [&](EventId a, EventId b) { return t.dur[a] > t.dur[b]; });
  keep_every_op(ix, f.events, 256);
  set_span(t, f);
  const DeviceProperties* dp = t.device(ix.device);
  f.evidence.push_back(fmt::format("{} of kernel time ({} of {}) is FP32 GEMM/conv math without tensor cores{}; "
                                   "GEMM/conv take {} in all",
                                   pct_text(share), dur_text(fp32_time), dur_text(kernel_time),
                                   dp ? fmt::format(" on {} (sm_{}{})", dp->name, dp->compute_major, dp->compute_minor)
                                      : std::string(""),
                                   dur_text(matmul_time)));
  f.evidence.push_back("kernels: " + top_by_time(by_kernel, 3));
  // Only ops: kernels launched outside any op are named on the kernels line already.
  if (!by_op.empty()) f.evidence.push_back("ops: " + top_by_time(by_op, 3));
  if (!conversions.empty())
    f.evidence.push_back(fmt::format("cuDNN converts channels_last tensors to NCHW and back around these kernels: {}, "
                                     "{} ({}), counted in the cost, as its tensor-core kernels take channels_last "
                                     "tensors as they are",
                                     count_text(conversions.size(), "conversion kernel"), dur_text(converted_time),
                                     top_by_time(by_conversion, 2)));
  f.locations = user_locations(ix, f.events);
  f.fix = reduced_precision_fix(ix, by_op.empty() ? top_key(by_kernel) : top_key(by_op));
  out.findings.push_back(std::move(f));
}

void detect_layout_conversion(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  if (ix.gpu.empty()) return detect_layout_conversion_on_cpu(ix, begin, end, out);  // cpu_op_rules.cpp
  const Trace& t = ix.t;
  // A conversion: cuDNN's own transposes, or the copy kernel of an aten::contiguous (the
  // copy_ under its clone) that changes an image tensor's memory format: one a convolution
  // makes of its input (an NCHW tensor reaching channels-last weights, or the reverse), or
  // one the code asks for (a 4-D channels-last tensor made NCHW-contiguous, or
  // contiguous(memory_format=torch.channels_last)); not an attention transpose's copy.
  // The aten::contiguous above a copy kernel, and the op above that.
  const auto contiguous_of = [&](EventId g) {
    EventId op = ix.tree.owner_op(g), contiguous = kNoEvent;
    while (op != kNoEvent && (ix.has(op, kCloneOp) || t.name_of(op) == "aten::copy_")) {
      if (t.name_of(op) == "aten::contiguous") contiguous = op;
      op = ix.tree.parent(op);
    }
    return std::pair{contiguous, op};
  };
  const auto convolution = [&](EventId op) { return op != kNoEvent && is_convolution_op(t.name_of(op)); };
  // Whether the contiguous call's input is a 4-D channels-last tensor, and the memory format it
  // asks for (its second argument, recorded: "2" is MemoryFormat::ChannelsLast); nullopt when
  // the trace does not say.
  const auto formats = [&](EventId contiguous) -> std::optional<std::pair<bool, bool>> {
    const OpArgs* a = t.op(contiguous);
    if (a == nullptr) return std::nullopt;
    const std::vector<int64_t> dims = first_ints(t.strings.view(a->input_dims)), strides = first_ints(t.strings.view(a->input_strides));
    if (dims.size() != 4 || strides.size() != 4) return std::nullopt;
    return std::pair{dims[1] > 1 && strides[1] == 1 && strides[3] == dims[1], quoted(t.strings.view(a->concrete_inputs), 1) == "2"};
  };
  const auto conversion = [&](EventId g) {
    if (ix.has(g, kLayoutKernel)) return true;
    const auto [contiguous, op] = contiguous_of(g);
    if (contiguous == kNoEvent) return false;
    if (convolution(op)) return true;
    const auto f = formats(contiguous);
    return f && (f->first || f->second);
  };
  // The code itself making a channels-last tensor NCHW-contiguous (x.contiguous() on the output
  // of a channels_last model's layer): converting the model would not help, dropping the call would.
  // Not a call inside an op (aten::group_norm makes its channels-last input contiguous itself,
  // gpuzoo_0059).
  const auto back_to_nchw = [&](EventId g) {
    const auto [contiguous, op] = contiguous_of(g);
    if (contiguous == kNoEvent || is_torch_op(ix, op)) return false;
    const auto f = formats(contiguous);
    return f && f->first && !f->second;
  };
  int64_t conv_time = 0, conv_kernels = 0, layout_time = 0;
  std::map<std::string, int64_t> by_op, by_kernel;
  RuleFinding f;
  each_kernel(ix, begin, end, [&](size_t i, EventId g) {
    if (conversion(g)) {
      // cuDNN's transposes around its FP32 kernels are fp32_no_tensor_cores' cost: its fix
      // removes them (gpuzoo_0001, labeled FP32 only). Not reported here at all, not even as
      // information: the same time would count twice in the window's order, the grouped
      // findings and the recoverable share, and a second finding names a second problem
      // (the fix here read "convert once: model.to(memory_format=torch.channels_last)" on a
      // model that is channels_last already).
      if (fp32_kernel_around(ix, g) != kNoEvent) return;
      layout_time += t.dur[g];
      if (const EventId op = ix.tree.owner_op(g); op != kNoEvent) by_op[std::string(t.name_of(op))] += t.dur[g];
      by_kernel[readable_kernel_name(t.name_of(g))] += t.dur[g];
      f.events.push_back(g);
    } else if (ix.gpu_cat[i] == OpCategory::CONV_fwd || ix.gpu_cat[i] == OpCategory::CONV_bwd) {
      conv_time += t.dur[g];
      ++conv_kernels;
    }
  });
  // The GPU waiting while the host converts: gaps that end when an aten::contiguous's copy
  // arrives, also one the range sees only the start of (the host inside the call through the
  // whole range). Not cuDNN's own transposes: the host time before them is the
  // convolution's dispatch, which the gap would hold without them.
  const std::vector<LaunchGap> gaps = launch_gaps(ix, begin, end, true);
  std::vector<Interval> between;
  const std::vector<Interval> idle = gaps_caused_by(
      ix, gaps, out, [&](size_t k) { return conversion(ix.gpu[k]) && !ix.has(ix.gpu[k], kLayoutKernel); }, &between);
  const int64_t waited = idle_of(idle);
  const double idle_share = static_cast<double>(waited) / static_cast<double>(end - begin);
  const bool by_kernels = f.events.size() >= kMinConversions && conv_time > 0;
  const double share = by_kernels ? static_cast<double>(layout_time) / static_cast<double>(conv_time + layout_time) : 0.0;
  const bool kernels_fire = by_kernels && share >= kLayoutFireShare, idle_fires = idle_share >= kLayoutIdleFireShare;
  if (!kernels_fire && !idle_fires) return;
  f.id = "layout_conversion";
  f.confidence = std::max(kernels_fire ? confidence_between(share, kLayoutFireShare, kLayoutStrongShare) : 0.0,
                          idle_fires ? confidence_between(idle_share, kLayoutIdleFireShare, kLayoutIdleStrongShare) : 0.0);
  f.cost = std::min(layout_time + waited, end - begin);
  // Where that cost lies, as for redundant_copy's and cast_churn's copies: the conversions' time
  // in the range and the launch gaps gaps_caused_by gave them; the extent follows.
  f.spans = kernels_and_idle(t, f.events, idle, begin, end);
  if (f.events.empty()) f.events = kernels_ending(ix, gaps, idle);  // only the wait shows here: the kernels arrive after the range
  set_span(t, f);
  if (kernels_fire)
    f.evidence.push_back(fmt::format("{} take{} {}, {} of the time of the convolutions they wrap ({}, {})",
                                     count_text(f.events.size(), "memory-format conversion kernel"),
                                     f.events.size() == 1 ? "s" : "", dur_text(layout_time), pct_text(share),
                                     count_text(conv_kernels, "kernel"),
                                     dur_text(conv_time)));
  if (waited > 0) {
    // Named by the call the host was in: the aten::contiguous above a conversion's copy.
    EventId op = ix.tree.owner_op(f.events.back());
    for (EventId up = op; up != kNoEvent && (ix.has(up, kCloneOp) || t.name_of(up) == "aten::copy_"); up = ix.tree.parent(up)) op = up;
    f.evidence.push_back(fmt::format("GPU idle {} ({} of the range) in {} ended by a memory-format conversion's kernel{}: "
                                     "the GPU waits while the host converts",
                                     dur_text(waited), pct_text(idle_share), count_text(idle.size(), "gap"),
                                     op == kNoEvent ? std::string("") : fmt::format(" (under {})", t.name_of(op))));
    if (!between.empty()) f.evidence.push_back(between_launches_text(between, "conversions"));
  }
  if (!by_kernel.empty())
    f.evidence.push_back("kernels: " + top_by_time(by_kernel, 2) + (by_op.empty() ? "" : "; under " + top_by_time(by_op, 2)));
  f.locations = user_locations(ix, f.events);
  // 3-D convolutions take the 5-D format: model.to(memory_format=torch.channels_last) raises
  // "required rank 4 tensor to use channels_last format" on Conv3d weights (r3d_18, gpuzoo_0015,
  // 0031, 0047: NCDHW inputs cuDNN transposes for its NDHWC bf16 kernels).
  const auto five_d = [&](EventId g) {
    const EventId op = ix.tree.owner_op(g);
    const OpArgs* a = op == kNoEvent ? nullptr : t.op(op);
    return a != nullptr && first_ints(t.strings.view(a->input_dims)).size() == 5;
  };
  f.fix = 2 * std::count_if(f.events.begin(), f.events.end(), five_d) > static_cast<std::ptrdiff_t>(f.events.size())
              ? "convert once: model.to(memory_format=torch.channels_last_3d) and each input batch "
                "x.to(memory_format=torch.channels_last_3d), so cuDNN's NDHWC kernels get NDHWC tensors"
              : "convert once: model.to(memory_format=torch.channels_last) and each input batch "
                "x.to(memory_format=torch.channels_last), so cuDNN's NHWC kernels get NHWC tensors";
  // Where the code makes tensors NCHW, the convolutions' own conversions of their NCHW inputs
  // (aten::contiguous under them) follow from it: the two together are the pattern.
  const auto made_by_convolution = [&](EventId g) {
    const auto [contiguous, op] = contiguous_of(g);
    return contiguous != kNoEvent && convolution(op);
  };
  const auto back = std::count_if(f.events.begin(), f.events.end(), back_to_nchw);
  // Group norm's own conversions: PyTorch's group_norm makes its input (its backward, the
  // gradient too) NCHW-contiguous on the GPU whatever its format, and returns NCHW, which the
  // next convolution converts back (aten/src/ATen/native/group_norm.cpp: only the CPU kernel
  // keeps channels_last; gpuzoo_0059, a channels_last diffusion UNet with a GroupNorm before
  // each convolution). Dropping no call of the code's helps there; the format does.
  const auto made_by_group_norm = [&](EventId g) {
    const auto [contiguous, op] = contiguous_of(g);
    if (contiguous == kNoEvent || op == kNoEvent) return false;
    const std::string_view by = t.name_of(op);
    return by.find("group_norm") != std::string_view::npos || by.find("GroupNorm") != std::string_view::npos;
  };
  const auto norm = std::count_if(f.events.begin(), f.events.end(), made_by_group_norm);
  const auto by_convolutions = std::count_if(f.events.begin(), f.events.end(), made_by_convolution);
  const auto most = [&](std::ptrdiff_t n) { return 2 * n > static_cast<std::ptrdiff_t>(f.events.size()); };
  if (back > 0 && most(back + by_convolutions))
    f.fix = "the code makes channels_last tensors NCHW again with .contiguous() (aten::contiguous on channels_last "
            "inputs): drop those calls, or call .contiguous(memory_format=torch.channels_last), so the tensors stay "
            "in the format the model's convolutions use";
  else if (norm > 0 && most(norm + by_convolutions))
    f.fix = "the conversions are group norm's: on the GPU PyTorch's group_norm (and its backward) makes its "
            "channels_last input NCHW and returns NCHW, which the next convolution converts back; it has no "
            "channels_last kernel there, so keep the model (or its blocks with GroupNorm) NCHW, without "
            ".to(memory_format=torch.channels_last)";
  claim_launch_gaps(idle, out);
  out.findings.push_back(std::move(f));
}

void detect_cast_churn(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  if (ix.gpu.empty()) return detect_cast_churn_on_cpu(ix, begin, end, out);  // cpu_op_rules.cpp
  const Trace& t = ix.t;
  int64_t kernel_time = 0, cast_time = 0;
  std::map<std::string, int64_t> by_cast;
  std::map<std::string, int> count_by_cast, count_around;  // in the range; launched one by one around it
  std::set<size_t> cast_at;  // positions in ix.gpu of the casts the step launches one by one (around the range)
  RuleFinding f;
  const int64_t mid = begin + (end - begin) / 2;
  const int64_t ctx_b = std::min(begin, mid - kCastContext / 2), ctx_e = std::max(end, mid + kCastContext / 2);
  each_kernel(ix, ctx_b, ctx_e, [&](size_t i, EventId g) {
    const bool inside = t.ts[g] >= begin && t.ts[g] < end;
    if (inside) kernel_time += t.dur[g];
    if (ix.gpu_in_optimizer[i]) return;
    const EventId op = ix.tree.owner_op(g);
    if (op == kNoEvent) return;
    const EventId cast = cast_of(ix, op);
    if (cast == kNoEvent) return;
    // A cast changes the dtype: aten::copy_(dst, src) under it shows both; the same dtype on
    // both sides is a memory-format or device copy, not a cast.
    std::string from = first_type(t, cast);
    if (t.name_of(op) == "aten::copy_") {
      const OpArgs* a = t.op(op);
      const std::string_view types = a ? t.strings.view(a->input_types) : std::string_view{};
      const std::string dst = quoted(types, 0), src = quoted(types, 1);
      if (!dst.empty() && dst == src) return;
      if (!src.empty()) from = src + " to " + dst;
    }
    const std::string key = from.empty() ? std::string(t.name_of(cast)) : fmt::format("{} from {}", t.name_of(cast), from);
    // Only a cast the code asks for itself (.half(), .to(dtype)) is launched one by one by
    // the step: autocast's casts inside a conv or matmul are part of that op's dispatch, and
    // their backward (ToCopyBackward0, or a cast inside convolution_backward) of autograd's.
    EventId caller = ix.tree.parent(cast);
    while (caller != kNoEvent && ix.has(caller, kCastOp)) caller = ix.tree.parent(caller);  // _to_copy under aten::to
    const bool inside_op = is_torch_op(ix, caller);
    if (!inside_op) cast_at.insert(i);
    if (!inside) {
      if (!inside_op) ++count_around[key];  // the loop around the range, named by its casts
      return;
    }
    cast_time += t.dur[g];
    by_cast[key] += t.dur[g];
    ++count_by_cast[key];
    f.events.push_back(g);
  });
  // Casts launched one by one (a loop recasting every weight) each cost a launch and the
  // host's dispatch for a microsecond of copying: on a fast GPU the idle they leave between
  // them is most of what they cost, and it is theirs, not launch_bound's. A gap that runs
  // past the range's end counts for its part inside when a cast's kernel ends it: the range
  // sees the host on its way to that launch.
  const std::vector<LaunchGap> gaps = launch_gaps(ix, begin, end, true);
  std::vector<Interval> between;
  const std::vector<Interval> idle = gaps_caused_by(ix, gaps, out, [&](size_t k) { return cast_at.count(k) > 0; }, &between);
  const int64_t cast_idle = idle_of(idle);
  const bool by_kernels = f.events.size() >= kMinCasts && kernel_time > 0;
  const double share = by_kernels ? static_cast<double>(cast_time) / static_cast<double>(kernel_time) : 0.0;
  const double idle_share = static_cast<double>(cast_idle) / static_cast<double>(end - begin);
  // The idle alone names the casts only when they are a loop: kMinCasts launched one by one
  // around the range.
  const bool idle_fires = idle_share >= kCastIdleFireShare && cast_at.size() >= kMinCasts;
  if (!(by_kernels && share >= kCastFireShare) && !idle_fires) return;
  if (f.events.empty()) f.events = kernels_ending(ix, gaps, idle);  // only the wait shows here: the casts' kernels arrive after the range
  f.id = "cast_churn";
  f.confidence = std::max(by_kernels ? confidence_between(share, kCastFireShare, kCastStrongShare) : 0.0,
                          idle_fires ? confidence_between(idle_share, kCastIdleFireShare, kCastIdleStrongShare) : 0.0);
  f.cost = cast_time + cast_idle;
  const size_t casts = cast_time > 0 ? f.events.size() : 0;
  f.spans = kernels_and_idle(t, casts > 0 ? f.events : std::vector<EventId>{}, idle, begin, end);
  if (f.events.size() > 256) f.events.resize(256);
  set_span(t, f);  // the spans hold the wait for the first cast
  if (casts > 0)
    f.evidence.push_back(fmt::format("{} under aten::to/_to_copy take{} {}, {} of kernel time in the range",
                                     count_text(casts, "dtype-cast kernel"), casts == 1 ? "s" : "", dur_text(cast_time),
                                     pct_text(share)));
  // Only where there are such casts: casts inside a conv or matmul (autocast's) are counted
  // above and are no loop ("0 dtype casts launched one by one" said nothing true).
  if ((ctx_b < begin || ctx_e > end) && !cast_at.empty())
    f.evidence.push_back(fmt::format("{} launched one by one in the {} around the range", count_text(cast_at.size(), "dtype cast"),
                                     dur_text(ctx_e - ctx_b)));
  if (cast_idle > 0)
    f.evidence.push_back(fmt::format("GPU idle {} ({} of the range) in {} that end as soon as a cast kernel's launch "
                                     "arrives: the host is launching the casts one by one",
                                     dur_text(cast_idle), pct_text(idle_share), count_text(idle.size(), "gap")));
  if (!between.empty()) f.evidence.push_back(between_launches_text(between, "casts"));
  std::string most;
  int most_n = 0;
  for (auto& [k, n] : count_by_cast.empty() ? count_around : count_by_cast)
    if (n > most_n) most_n = n, most = k;
  if (count_by_cast.empty()) f.evidence.push_back(fmt::format("most common around the range: {} x{}", most, most_n));
  else f.evidence.push_back(fmt::format("most common: {} x{} ({})", most, most_n, dur_text(by_cast[most])));
  f.locations = user_locations(ix, f.events);
  f.fix = fmt::format("cast once, outside the loop: convert the model or buffers to the compute dtype up front "
                      "(model.to(torch.bfloat16)) and create inputs in it, instead of {} every step{}",
                      most, at_text(f.locations));
  claim_launch_gaps(idle, out);
  out.findings.push_back(std::move(f));
}

void detect_low_occupancy(const RuleIndex& ix, int64_t begin, int64_t end, DetectorOutput& out) {
  const Trace& t = ix.t;
  if (ix.num_sms <= 0) return;  // without the SM count there is nothing to compare a grid to
  int64_t kernel_time = 0, low_time = 0;
  double idle_sm_time = 0;
  std::map<std::string, int64_t> by_kernel;
  RuleFinding f;
  each_kernel(ix, begin, end, [&](size_t, EventId g) {
    kernel_time += t.dur[g];
    const KernelArgs* k = t.kernel(g);
    if (t.dur[g] < kMinOccKernel || k == nullptr || k->grid[0] <= 0) return;
    const int64_t blocks = int64_t{k->grid[0]} * std::max(1, k->grid[1]) * std::max(1, k->grid[2]);
    if (blocks >= ix.num_sms) return;
    low_time += t.dur[g];
    idle_sm_time += static_cast<double>(t.dur[g]) * (1.0 - static_cast<double>(blocks) / ix.num_sms);
    by_kernel[fmt::format("{} ({} blocks)", readable_kernel_name(t.name_of(g)), blocks)] += t.dur[g];
    f.events.push_back(g);
  });
  if (kernel_time == 0 || f.events.empty()) return;
  const double share = static_cast<double>(low_time) / static_cast<double>(kernel_time);
  const double idle_share = idle_sm_time / static_cast<double>(kernel_time);
  if (idle_share < kOccFireShare || idle_sm_time < kMinIdleSmTime) return;
  f.id = "low_occupancy";
  f.confidence = confidence_between(idle_share, kOccFireShare, kOccStrongShare);
  f.cost = static_cast<int64_t>(idle_sm_time);
  std::stable_sort(f.events.begin(), f.events.end(), [&](EventId a, EventId b) { return t.dur[a] > t.dur[b]; });
  if (f.events.size() > 256) f.events.resize(256);
  set_span(t, f);
  f.evidence.push_back(fmt::format("kernels with fewer blocks than the GPU's {} SMs take {} ({} of kernel time); the "
                                   "idle SMs amount to {}",
                                   ix.num_sms, dur_text(low_time), pct_text(share), dur_text(f.cost)));
  f.evidence.push_back("largest: " + top_by_time(by_kernel, 3));
  f.locations = user_locations(ix, f.events);
  f.fix = fmt::format("{} launches too few blocks to fill {} SMs: raise the batch size, fuse these small ops, or run "
                      "independent work concurrently on another stream",
                      op_name(ix, f.events.front()), ix.num_sms);
  out.findings.push_back(std::move(f));
}

}  // namespace ttap::rules
