// GPU-side ProfilerStep annotations that are markers, not spans. ROCm writes 16-18 us
// annotations that hold almost none of the GPU work their step launched; ttap then draws
// the span CUDA's annotations have (Kineto draws each around its step's work): from the
// first to the last GPU event the CPU steps launched (runtime launch -> kernel
// correlation). Every figure below comes from tests/tools/compute_expected.py (section
// "rocm_scope"), which reads the raw events with Python's json module:
//
//   /usr/bin/python3 tests/tools/compute_expected.py rocm_scope
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "suite_support.hpp"
#include "ttap/analyze.hpp"
#include "ttap/load.hpp"

namespace {

using ttap::suite::data_path;

struct Loaded {
  explicit Loaded(const std::string& path) : trace(ttap::load_trace(path)), tree(ttap::EventTree::build(trace)) {}
  ttap::Trace trace;
  ttap::EventTree tree;
};

struct KernelTotals {
  int64_t count = 0, time = 0;
};

KernelTotals kernel_totals(const std::vector<ttap::KernelRow>& rows, std::string_view name = {}) {
  KernelTotals k;
  for (const auto& r : rows) {
    if (!name.empty() && r.name != name) continue;
    k.count += r.count;
    k.time += r.total;
  }
  return k;
}

constexpr std::string_view kRcclAllReduce = "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)";

// ResNet training on MI300, steps 15-17. The three GPU-side annotations last 16-18 us and
// hold 9 of the 2,685 GPU events the CPU steps launched; their span (+32.27 to +70.28 ms
// after the first GPU event) kept 1,793 GPU events, total 38.0 ms, 8 all-reduces. The work
// the steps launched runs from +30.05 to +86.57 ms: 2,685 events, 4 all-reduces a step.
// 968 more GPU events (among them 5 all-reduces) have no launch in the trace: step 14's
// and earlier, queued before recording began, running before that span; with them the
// device's GPU events would give 3,653 events, total 86.57 ms, busy 84.00 ms, 17
// all-reduces for 3 steps.
TEST(RocmStepScope, ResnetMi300ScopesTheWorkTheStepsLaunched) {
  const Loaded l(data_path("tracelens_resnet_ckpt_mi300.json.gz"));
  const auto scopes = ttap::gpu_scopes(l.trace, l.tree);
  ASSERT_EQ(scopes.size(), 1u);
  EXPECT_EQ(scopes[0].device, 2);
  EXPECT_TRUE(scopes[0].from_steps);
  EXPECT_TRUE(scopes[0].by_launch) << "16-18 us annotations are markers";
  EXPECT_EQ(scopes[0].begin, 3743411252944510);
  EXPECT_EQ(scopes[0].end, 3743411309462113);
  EXPECT_EQ(ttap::scoped_gpu_events(l.trace, l.tree).size(), 2685u);

  const auto tl = ttap::gpu_timeline(l.trace, l.tree);
  ASSERT_EQ(tl.size(), 1u);
  EXPECT_TRUE(tl[0].by_launch);
  EXPECT_EQ(tl[0].total, 56517603);
  EXPECT_EQ(tl[0].busy, 56234067);
  EXPECT_EQ(tl[0].idle, 56517603 - 56234067);
  EXPECT_EQ(tl[0].computation, 19561931);
  EXPECT_EQ(tl[0].communication, 47200310);
  EXPECT_EQ(tl[0].memcpy, 1633426);

  const auto kernels = ttap::kernel_summary(l.trace, l.tree);
  const KernelTotals all = kernel_totals(kernels);
  EXPECT_EQ(all.count, 2685);
  EXPECT_EQ(all.time, 68395667);
  const KernelTotals rccl = kernel_totals(kernels, kRcclAllReduce);
  EXPECT_EQ(rccl.count, 12);
  EXPECT_EQ(rccl.time, 47200310);
}

// What a user reads: `ttap summary` says which scope its tables cover.
TEST(RocmStepScope, SummarySaysTheAnnotationsAreMarkers) {
  const auto r = ttap::suite::run_ttap({"summary", data_path("tracelens_resnet_ckpt_mi300.json.gz"), "--table", "gpu_timeline"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("total_time           56.5176"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the GPU-side step annotations are markers"), std::string::npos) << r.out;
  const auto cuda = ttap::suite::run_ttap({"summary", data_path("tracelens_qwen05b_h100.json.gz"), "--table", "gpu_timeline"});
  ASSERT_EQ(cuda.exit_code, 0) << cuda.err;
  EXPECT_NE(cuda.out.find("scope: the GPU-side ProfilerStep annotations;"), std::string::npos) << cuda.out;
}

// HTA's MI250 toy: one 1.03 ms GPU-side annotation that holds 8 of the 16 GPU events its
// step launched. They run over 8.91 ms, 0.149 ms of it busy.
TEST(RocmStepScope, Mi250ToyKeepsAllSixteenEvents) {
  const Loaded l(data_path("hta_mi250_toy.json.gz"));
  const auto tl = ttap::gpu_timeline(l.trace, l.tree);
  ASSERT_EQ(tl.size(), 1u);
  EXPECT_TRUE(tl[0].from_steps);
  EXPECT_TRUE(tl[0].by_launch);
  EXPECT_EQ(tl[0].begin, 4203669603454206);
  EXPECT_EQ(tl[0].end, 4203669612366093);
  EXPECT_EQ(tl[0].total, 8911887);
  EXPECT_EQ(tl[0].busy, 149042);
  EXPECT_EQ(tl[0].computation, 110881);
  EXPECT_EQ(tl[0].memcpy, 38161);
  const KernelTotals all = kernel_totals(ttap::kernel_summary(l.trace, l.tree));
  EXPECT_EQ(all.count, 16);
  EXPECT_EQ(all.time, 149042);
}

// Annotations that hold their step's work stay spans, on CUDA and on ROCm alike (the two
// MI300 traces below hold 1,054 of 1,054 and 4,340 of 4,340).
TEST(RocmStepScope, AnnotationsThatHoldTheirWorkStaySpans) {
  for (const char* name : {"tracelens_qwen05b_h100.json.gz", "tracelens_vit_nsfw_h100.json.gz",
                           "tracelens_qwen05b_mi300.json.gz", "tracelens_owlv2_mi300.json.gz"}) {
    const Loaded l(data_path(name));
    const auto scopes = ttap::gpu_scopes(l.trace, l.tree);
    ASSERT_EQ(scopes.size(), 1u) << name;
    EXPECT_TRUE(scopes[0].from_steps) << name;
    EXPECT_FALSE(scopes[0].by_launch) << name;
  }
  // qwen05b_h100's span, from the Python oracle: [1428625746382662, 1428625781275083).
  const Loaded l(data_path("tracelens_qwen05b_h100.json.gz"));
  const auto s = ttap::gpu_scopes(l.trace, l.tree)[0];
  EXPECT_EQ(s.begin, 1428625746382662);
  EXPECT_EQ(s.end, 1428625781275083);
}

// By hand: the marker rule's edges, which the real traces do not reach. CPU steps #1
// [100, 200) and #2 [200, 300) us; GPU-side markers of 2 us. K1 and K2 launched in step 1,
// K3 in step 2: the markers hold K1 only (1 of 3), and the span is theirs, [110, 450). As
// with any span, what starts inside it is in, whoever launched it: K5 (no launch in the
// trace) at 130 and K4 (launched at 350, after the steps) at 412; K6 (no launch) at 90 and
// K7 (launched after the steps) at 460 are out. Busy: K1 10 + K5 5 + K2 10 + K4 4 + K3 30
// = 59 us of 340.
constexpr const char* kMarkers = R"json({"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100,"dur":100},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":200,"dur":100},
{"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":105,"dur":2,"args":{"correlation":1}},
{"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":150,"dur":2,"args":{"correlation":2}},
{"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":250,"dur":2,"args":{"correlation":3}},
{"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":350,"dur":2,"args":{"correlation":4}},
{"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":360,"dur":2,"args":{"correlation":7}},
{"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#1","pid":2,"tid":0,"ts":110,"dur":2,"args":{"device":2}},
{"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#2","pid":2,"tid":0,"ts":300,"dur":2,"args":{"device":2}},
{"ph":"X","cat":"kernel","name":"K6","pid":2,"tid":0,"ts":90,"dur":5,"args":{"device":2,"stream":0,"correlation":96}},
{"ph":"X","cat":"kernel","name":"K1","pid":2,"tid":0,"ts":110,"dur":10,"args":{"device":2,"stream":0,"correlation":1}},
{"ph":"X","cat":"kernel","name":"K5","pid":2,"tid":0,"ts":130,"dur":5,"args":{"device":2,"stream":0,"correlation":95}},
{"ph":"X","cat":"kernel","name":"K2","pid":2,"tid":0,"ts":400,"dur":10,"args":{"device":2,"stream":0,"correlation":2}},
{"ph":"X","cat":"kernel","name":"K4","pid":2,"tid":0,"ts":412,"dur":4,"args":{"device":2,"stream":0,"correlation":4}},
{"ph":"X","cat":"kernel","name":"K3","pid":2,"tid":0,"ts":420,"dur":30,"args":{"device":2,"stream":0,"correlation":3}},
{"ph":"X","cat":"kernel","name":"K7","pid":2,"tid":0,"ts":460,"dur":10,"args":{"device":2,"stream":0,"correlation":7}}
]})json";

TEST(RocmStepScope, MarkersByHandGiveTheSpanOfTheStepsLaunches) {
  constexpr int64_t us = 1000;
  const Loaded l(ttap::suite::write_file("rocm_markers.json", kMarkers));
  const auto tl = ttap::gpu_timeline(l.trace, l.tree);
  ASSERT_EQ(tl.size(), 1u);
  EXPECT_TRUE(tl[0].by_launch);
  EXPECT_EQ(tl[0].begin, 110 * us);
  EXPECT_EQ(tl[0].end, 450 * us);
  EXPECT_EQ(tl[0].total, 340 * us);
  EXPECT_EQ(tl[0].busy, 59 * us);
  std::vector<std::string> names;
  for (ttap::EventId g : ttap::scoped_gpu_events(l.trace, l.tree)) names.emplace_back(l.trace.name_of(g));
  EXPECT_EQ(names, (std::vector<std::string>{"K1", "K5", "K2", "K4", "K3"}));
}

// The same trace with spans that hold their steps' work (K1, K2 in #1's [105, 415), K3 in
// #2's [415, 455)) keeps the annotations' span: [105, 455), the same five events.
TEST(RocmStepScope, SpansByHandKeepTheAnnotationSpan) {
  std::string spans = kMarkers;
  const auto swap = [&spans](const std::string& from, const std::string& to) {
    const size_t at = spans.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    spans.replace(at, from.size(), to);
  };
  swap(R"("ts":110,"dur":2,"args":{"device":2})", R"("ts":105,"dur":310,"args":{"device":2})");
  swap(R"("ts":300,"dur":2,"args":{"device":2})", R"("ts":415,"dur":40,"args":{"device":2})");
  const Loaded l(ttap::suite::write_file("rocm_spans.json", spans));
  const auto scopes = ttap::gpu_scopes(l.trace, l.tree);
  ASSERT_EQ(scopes.size(), 1u);
  EXPECT_FALSE(scopes[0].by_launch);
  EXPECT_EQ(scopes[0].begin, 105 * 1000);
  EXPECT_EQ(scopes[0].end, 455 * 1000);
  EXPECT_EQ(ttap::scoped_gpu_events(l.trace, l.tree).size(), 5u);
}

}  // namespace
