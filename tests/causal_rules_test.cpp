// Causal rule judgement on real traces (issue 12 items 0 and 1): a range is judged by the
// host spans that cross its edges with their whole length, by what the host did in its GPU
// idle gaps, and by the op that really holds the time; findings are named most severe and
// costliest first; costs stay inside their range; fixes name constructors that exist.
// Traces come from tests/data, else from ../shared/traces/public (skipped when neither).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "ttap/load.hpp"
#include "ttap/rules.hpp"
#include "ttap/windows.hpp"
#include "rules_support.hpp"

namespace {

namespace fs = std::filesystem;

using ttap::rules_support::Loaded;

// The trace from tests/data, else from the shared folder; nullptr when neither has it.
const Loaded* find_trace(const std::string& name) {
  std::string path = ttap::test::data(name);
  if (!fs::exists(path)) path = std::string(TTAP_SHARED_TRACES) + "/" + name;
  if (!fs::exists(path)) return nullptr;
  return &ttap::rules_support::load(path);
}
#define TRACE_OR_SKIP(var, name)      \
  const Loaded* var = find_trace(name); \
  if (var == nullptr) GTEST_SKIP() << "neither tests/data nor " << TTAP_SHARED_TRACES << " has " << name

using ttap::rules_support::findings_text;

// "2.18 ms" / "40 us" / "12.0 us" back to ns.
int64_t parse_dur(const std::string& num, const std::string& unit) {
  const double v = std::stod(num);
  return static_cast<int64_t>(v * (unit == "ms" ? 1e6 : 1e3));
}

// Each cpu_bound_step line names the op that holds the time: a single call ("inside X (one
// D call)") is at least as long as the idle blamed on it; many calls say how many and the
// longest. hta_ddp_a100_nccl's backward gaps hold 81 aten::as_strided calls of at most
// 59 us: they are not 3.62 ms "inside aten::as_strided".
TEST(CausalBlame, NamesTheOpThatHoldsTheTime) {
  TRACE_OR_SKIP(l, "hta_ddp_a100_nccl.json.gz");
  const std::regex inside(R"(^([0-9.]+) (ms|us) of that idle inside (.+) \(one ([0-9.]+) (ms|us) call\)$)");
  const std::regex calls(R"(^([0-9.]+) (ms|us) of that idle in ([0-9]+) (.+) calls \(longest ([0-9.]+) (ms|us)\)$)");
  // The part of longer gaps the work holds (tests/partial_gap_rules_test.cpp): never more
  // than those gaps.
  const std::regex partial(
      R"(^([0-9.]+) (ms|us) of that idle is the part of longer gaps \(([0-9.]+) (ms|us) in all\) that the host spends in that work; the rest of them is not counted here$)");
  size_t lines = 0, as_strided = 0;
  for (auto [b, e] : l->windows)
    for (const auto& f : l->engine->detect(b, e)) {
      if (f.id != "cpu_bound_step") continue;
      for (size_t i = 1; i < f.evidence.size(); ++i) {
        std::smatch m;
        const std::string& line = f.evidence[i];
        if (std::regex_match(line, m, inside)) {
          EXPECT_GE(parse_dur(m[4], m[5]) * 101 / 100, parse_dur(m[1], m[2])) << line;
          EXPECT_NE(m[3], "aten::as_strided") << line;
        } else if (std::regex_match(line, m, calls)) {
          EXPECT_GE(std::stoi(m[3]), 2) << line;
          if (m[4] == "aten::as_strided") {
            ++as_strided;
            EXPECT_LE(parse_dur(m[5], m[6]), 59'000) << line;  // no as_strided call in the trace exceeds 59 us
          }
        } else if (std::regex_match(line, m, partial)) {
          EXPECT_LT(parse_dur(m[1], m[2]), parse_dur(m[3], m[4])) << line;
        } else {
          ADD_FAILURE() << "unexpected cpu_bound_step line: " << line;
        }
        ++lines;
      }
    }
  EXPECT_GT(lines, 0u);
  EXPECT_GT(as_strided, 0u);  // the backward gaps: the as_strided calls named as many short calls
}

// cuDNN's NCHW<->NHWC transposes run under the convolution ops but do no math: they are
// layout_conversion's evidence, never FP32 GEMM/conv time.
TEST(CausalKernels, LayoutTransposeIsNotFp32Math) {
  TRACE_OR_SKIP(l, "hta_ddp_a100_nccl.json.gz");
  size_t layout = 0;
  for (auto [b, e] : l->windows)
    for (const auto& f : l->engine->detect(b, e)) {
      if (f.id == "layout_conversion") ++layout;
      if (f.id != "fp32_no_tensor_cores") continue;
      for (ttap::EventId g : f.events) {
        const std::string_view n = l->trace.name_of(g);
        EXPECT_EQ(n.find("nchwToNhwc"), std::string_view::npos) << findings_text({f});
        EXPECT_EQ(n.find("nhwcToNchw"), std::string_view::npos) << findings_text({f});
      }
      for (const auto& line : f.evidence) EXPECT_EQ(line.find("nchwToNhwc"), std::string::npos) << line;
    }
  EXPECT_GT(layout, 0u);
}

// The optimizers torch.optim has. A fix may name torch.optim.X( only for these.
const std::set<std::string>& torch_optim() {
  static const std::set<std::string> s = {"SGD",   "Adam",  "AdamW",   "Adagrad", "Adadelta", "Adamax",
                                          "ASGD",  "NAdam", "RAdam",   "RMSprop", "Rprop",    "LBFGS",
                                          "SparseAdam"};
  return s;
}

// Judged over the steady state's windows and over each optimizer step span itself (a
// trace's only Shampoo step may lie outside its steady state).
void expect_real_optimizer_fixes(const Loaded& l, const std::string& foreign, size_t& foreign_seen) {
  const std::regex ctor(R"(torch\.optim\.([A-Za-z]+)\()");
  std::vector<std::pair<int64_t, int64_t>> ranges = l.windows;
  for (ttap::EventId e = 0; e < l.trace.size(); ++e)
    if (l.trace.name_of(e).starts_with("Optimizer.step#")) ranges.emplace_back(l.trace.ts[e], l.trace.end(e));
  for (auto [b, e] : ranges)
    for (const auto& f : l.engine->detect(b, e)) {
      if (f.id != "optimizer_single_tensor") continue;
      for (auto it = std::sregex_iterator(f.fix.begin(), f.fix.end(), ctor); it != std::sregex_iterator(); ++it)
        EXPECT_TRUE(torch_optim().count((*it)[1])) << f.fix;
      if (f.evidence[0].find("#" + foreign + ".step") != std::string::npos) {
        ++foreign_seen;
        EXPECT_NE(f.fix.find(foreign + " is not a torch.optim optimizer"), std::string::npos) << f.fix;
      }
    }
}

// Shampoo (hta_sampled_rank0) and torchrec's CombinedOptimizer (hta_mtia_no_gpu_large) are
// not torch.optim classes: the fix names the library's own multi-tensor option in general
// words, and torch.optim's flags only for what torch.optim has.
TEST(CausalFixes, OptimizerFixesNameRealConstructors) {
  size_t shampoo = 0, combined = 0;
  const Loaded* sampled = find_trace("hta_sampled_rank0.json.gz");
  const Loaded* mtia = find_trace("hta_mtia_no_gpu_large.json.gz");
  if (sampled == nullptr && mtia == nullptr) GTEST_SKIP() << "neither hta_sampled_rank0 nor hta_mtia_no_gpu_large found";
  if (sampled != nullptr) {
    expect_real_optimizer_fixes(*sampled, "Shampoo", shampoo);
    EXPECT_GT(shampoo, 0u);
  }
  if (mtia != nullptr) {
    expect_real_optimizer_fixes(*mtia, "CombinedOptimizer", combined);
    EXPECT_GT(combined, 0u);
  }
  const Loaded* nw0 = find_trace("kineto_resnet50_v100_nw0.json.gz");
  ASSERT_NE(nw0, nullptr);
  size_t none = 0;
  expect_real_optimizer_fixes(*nw0, "Shampoo", none);
}

// hta_torchrec_a100_rank0 runs ~162 ms ahead of its GPU. Its 704-byte device-to-host copies
// wait ~146 ms each in aten::copy_ for that queue: the wait is a sync on the queue
// (host_sync, across the steady state, names cudaMemcpyAsync), not 762 ms of small-transfer
// host time; and no cost exceeds its range.
TEST(CausalTransfers, SmallCopiesWaitingBehindTheQueueAreASync) {
  TRACE_OR_SKIP(l, "hta_torchrec_a100_rank0.json.gz");
  size_t small = 0;
  for (auto [b, e] : l->windows)
    for (const auto& f : l->engine->detect(b, e)) {
      EXPECT_LE(f.cost, e - b) << findings_text({f});
      if (f.id == "small_transfers") ++small;
    }
  const auto whole = l->engine->detect(l->begin, l->end);
  const ttap::RuleFinding* sync = nullptr;
  const ttap::RuleFinding* transfers = nullptr;
  for (const auto& f : whole) {
    EXPECT_LE(f.cost, l->end - l->begin) << findings_text({f});
    if (f.id == "host_sync") sync = &f;
    if (f.id == "small_transfers") transfers = &f;
  }
  ASSERT_NE(sync, nullptr) << findings_text(whole);
  EXPECT_NE(sync->evidence[0].find("cudaMemcpyAsync"), std::string::npos) << findings_text({*sync});
  EXPECT_NE(sync->fix.find("non_blocking=True"), std::string::npos) << sync->fix;
  ASSERT_NE(transfers, nullptr) << findings_text(whole);
  bool queue_line = false;
  for (const auto& line : transfers->evidence) queue_line = queue_line || line.find("behind the launch queue") != std::string::npos;
  EXPECT_TRUE(queue_line) << findings_text({*transfers});
  // The copies' own host time, not the queue's: well under the 762 ms the ops last in all.
  EXPECT_LT(transfers->cost, 200'000'000) << findings_text({*transfers});
}

// A range inside a long host call is judged by that call, whole: hta_alexnet_a100_small's
// 764 ms cudaMalloc (under aten::cudnn_convolution, in the trace's last fifth, past its
// warm-up) crosses every 5 ms range inside it, and they name alloc_churn first, its cost
// within the range.
TEST(CausalEdges, AllocatorCallCrossingTheRangeIsJudgedWhole) {
  TRACE_OR_SKIP(l, "hta_alexnet_a100_small.json.gz");
  const ttap::Trace& t = l->trace;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (ttap::EventId e = 0; e < t.size(); ++e) first = std::min(first, t.ts[e]), last = std::max(last, t.end(e));
  ttap::EventId call = ttap::kNoEvent;
  for (ttap::EventId e = 0; e < t.size(); ++e) {
    const std::string_view n = t.name_of(e);
    if ((n == "cudaMalloc" || n == "cudaFree") && t.ts[e] > last - (last - first) / 5 &&
        (call == ttap::kNoEvent || t.dur[e] > t.dur[call]))
      call = e;
  }
  ASSERT_NE(call, ttap::kNoEvent);
  ASSERT_GT(t.dur[call], 500'000'000);
  for (int i = 0; i < 10; ++i) {
    const int64_t b = t.ts[call] + 100'000'000 + i * 50'000'000, e = b + 5'000'000;
    ASSERT_LT(e, t.end(call));
    const auto v = l->engine->detect(b, e);
    ASSERT_FALSE(v.empty()) << "range " << i;
    EXPECT_EQ(v.front().id, "alloc_churn") << findings_text(v);
    EXPECT_LE(v.front().cost, e - b);
    bool crossing = false;
    for (const auto& line : v.front().evidence) crossing = crossing || line.find("crosses the range's edge") != std::string::npos;
    EXPECT_TRUE(crossing) << findings_text(v);
  }
}

// A range starting in the middle of a pageable upload's host call (param_resnet_2080ti's
// 73.5 MB aten::copy_ of the input batch) reports pageable_memcpy though the call began
// before it.
TEST(CausalEdges, PageableUploadWhoseCallBeganBeforeTheRange) {
  TRACE_OR_SKIP(l, "param_resnet_2080ti.json.gz");
  const ttap::Trace& t = l->trace;
  size_t judged = 0;
  for (ttap::EventId g = 0; g < t.size() && judged < 5; ++g) {
    if (t.category[g] != ttap::Category::GpuMemcpy || t.name_of(g).find("HtoD (Pageable") == std::string_view::npos) continue;
    const ttap::CopyArgs* c = t.copy(g);
    const ttap::EventId call = l->tree.launcher(g);
    if (c == nullptr || c->bytes < (1 << 20) || call == ttap::kNoEvent || t.dur[call] < 2'000'000) continue;
    const int64_t b = t.ts[call] + t.dur[call] / 2, e = t.end(call) + 1'000'000;
    bool found = false;
    for (const auto& f : l->engine->detect(b, e)) found = found || f.id == "pageable_memcpy";
    EXPECT_TRUE(found) << findings_text(l->engine->detect(b, e));
    ++judged;
  }
  EXPECT_GT(judged, 0u);
}

// The finding named first is the costliest of the most severe: never an info-level one
// ahead of a warning or error. On every window of these traces.
TEST(CausalOrder, MostSevereThenCostliestFirst) {
  for (const char* name : {"kineto_resnet50_v100_nw0.json.gz", "hta_ddp_a100_nccl.json.gz", "hta_alexnet_a100_small.json.gz"}) {
    const Loaded* l = find_trace(name);
    ASSERT_NE(l, nullptr) << name;
    for (auto [b, e] : l->windows) {
      const auto v = l->engine->detect(b, e);
      for (size_t i = 1; i < v.size(); ++i) {
        EXPECT_GE(v[i - 1].severity, v[i].severity) << name << "\n" << findings_text(v);
        if (v[i - 1].severity == v[i].severity) {
          EXPECT_GE(v[i - 1].cost, v[i].cost) << name << "\n" << findings_text(v);
        }
      }
    }
  }
}

}  // namespace

// Every kernel shorter than its launch call and the GPU idle most of the time: launch_bound,
// named ahead of the unfused_elementwise chains the same kernels form. The corpus trace
// surgery_0061 (train split) holds 40-250 injected 1.5-4 us elementwise kernels, each
// launched by a 12-30 us op, in [1414456664275.636, 1414456668636.048] us (manifest.jsonl);
// its 122 us windows hold six of them each, judged with the kernels around them.
TEST(CausalLaunch, ShortKernelsBehindLongLaunchesAreLaunchBound) {
  const std::string path = std::string(TTAP_SOURCE_DIR) + "/data/ttap-bench/traces/surgery_0061_tracelens_vit_nsfw_h100.json.gz";
  ASSERT_TRUE(fs::exists(path)) << path;
  ttap::Trace trace = ttap::load_trace(path);
  const ttap::EventTree tree = ttap::EventTree::build(trace);
  const ttap::RuleEngine engine(trace, tree);
  const int64_t lo = 1414456664275636, hi = 1414456668636048;
  size_t windows = 0, first = 0;
  for (int64_t b = lo; b + 122'000 <= hi; b += 122'000) {
    const auto v = engine.detect(b, b + 122'000);
    ++windows;
    if (!v.empty() && v.front().id == "launch_bound") ++first;
    if (!v.empty()) {
      EXPECT_NE(v.front().id, "unfused_elementwise") << findings_text(v);
    }
  }
  EXPECT_GE(windows, 30u);
  EXPECT_GE(first * 10, windows * 8) << first << " of " << windows;  // launch_bound first in at least 80%
}

// OWLv2 inference on an MI300X: 64% of each step is the DataLoader preparing images on the
// training thread, the GPU idle. The rules across the steady state report it as
// dataloader_stall costing over half of it (the steady-state pass keeps what costs at
// least a warning's share), not as nothing.
TEST(CausalCpuBound, PreprocessingInTheLoaderIsADataloaderStall) {
  TRACE_OR_SKIP(l, "tracelens_owlv2_mi300.json.gz");
  const auto v = l->engine->detect(l->begin, l->end);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().id, "dataloader_stall") << findings_text(v);
  EXPECT_GE(v.front().severity, ttap::Severity::warning) << findings_text(v);
  EXPECT_GE(v.front().cost * 2, l->end - l->begin) << findings_text(v);
}

// The GPU counts as idle from a step's start only where the GPU's record spans a good part
// of the steps: SGLang's 34 ms decode step records two kernels (11 us), and the host's
// dispatch into AITER kernels there is not "CPU work that launches nothing".
TEST(CausalCpuBound, NoIdleClaimedWhereKernelsWereNotRecorded) {
  for (const char* name : {"tracelens_sglang_decode_bs32.json.gz", "hta_event_sync_small.json.gz"}) {
    const Loaded* l = find_trace(name);
    if (l == nullptr) continue;
    for (auto [b, e] : l->windows)
      for (const auto& f : l->engine->detect(b, e)) EXPECT_NE(f.id, "cpu_bound_step") << name << "\n" << findings_text({f});
  }
}

// A short window inside a long DataLoader fetch is judged on the whole fetch: the corpus
// trace surgery_0165 (val split) holds a 3.35 ms single-process __next__ in
// [1414456661803.68, 1414456665203.909] us (manifest.jsonl); its 112 us windows inside it
// are dataloader_stall, never cpu_bound_step blaming the loader itself.
TEST(CausalCpuBound, WindowInsideALoaderFetchIsADataloaderStall) {
  const std::string path = std::string(TTAP_SOURCE_DIR) + "/data/ttap-bench/traces/surgery_0165_tracelens_vit_nsfw_h100.json.gz";
  ASSERT_TRUE(fs::exists(path)) << path;
  ttap::Trace trace = ttap::load_trace(path);
  const ttap::EventTree tree = ttap::EventTree::build(trace);
  const ttap::RuleEngine engine(trace, tree);
  size_t windows = 0;
  for (int64_t b = 1414456661900000; b + 112'000 <= 1414456665100000; b += 112'000, ++windows) {
    const auto v = engine.detect(b, b + 112'000);
    ASSERT_FALSE(v.empty());
    EXPECT_EQ(v.front().id, "dataloader_stall") << findings_text(v);
    for (const auto& f : v) {
      if (f.id != "cpu_bound_step") continue;
      for (const auto& line : f.evidence) EXPECT_EQ(line.find("DataLoader"), std::string::npos) << line;
    }
  }
  EXPECT_GE(windows, 20u);
}
