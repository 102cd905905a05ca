// The tree and the analyses on a small synthetic trace whose figures are computed by hand
// (in the comments), then on the controlled real pair kineto_resnet50 nw0 / nw4.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "ttap/analyze.hpp"
#include "ttap/load.hpp"

namespace {

using ttap::test::data;
using ttap::test::temp_file;

// Times in us. Thread 1: step [0,100] > aten::mm A [10,50] > launch R1 [12,14] (corr 1);
// aten::copy_ B [60,90] > R2 [61,63] (corr 2), R4 [64,67] (corr 4); D [95,105] overlaps
// the step's end by 5 us. Thread 2: nccl:all_reduce C [22,28] > R3 [25,27] (corr 3).
// GPU: K1 [20,40] s7 (corr 1); M2 memcpy [70,80] s7 (corr 2); NCCL [30,60] s8 (corr 3);
// K4 [85,86] s7 (corr 4).
constexpr const char* kTrace = R"json({"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":0,"dur":100},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":40,"args":{"Input Dims":[[4,4],[4,4]]}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":2,"args":{"correlation":1}},
{"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":60,"dur":30},
{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":61,"dur":2,"args":{"correlation":2}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":64,"dur":3,"args":{"correlation":4}},
{"ph":"X","cat":"cpu_op","name":"late_op","pid":1,"tid":1,"ts":95,"dur":10},
{"ph":"X","cat":"cpu_op","name":"nccl:all_reduce","pid":1,"tid":2,"ts":22,"dur":6},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":25,"dur":2,"args":{"correlation":3}},
{"ph":"X","cat":"kernel","name":"gemm_kernel","pid":0,"tid":7,"ts":20,"dur":20,"args":{"correlation":1,"stream":7,"device":0}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":70,"dur":10,"args":{"correlation":2,"stream":7,"device":0,"bytes":4096}},
{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float","pid":0,"tid":8,"ts":30,"dur":30,"args":{"correlation":3,"stream":8,"device":0}},
{"ph":"X","cat":"kernel","name":"vectorized_elementwise_kernel","pid":0,"tid":7,"ts":85,"dur":1,"args":{"correlation":4,"stream":7,"device":0}}
]})json";

class Synthetic : public ::testing::Test {
 protected:
  void SetUp() override {
    t_ = ttap::load_trace(temp_file("synthetic.json", kTrace));
    tree_ = ttap::EventTree::build(t_);
  }
  ttap::EventId find(std::string_view name) const {
    for (ttap::EventId e = 0; e < t_.size(); ++e)
      if (t_.name_of(e) == name) return e;
    return ttap::kNoEvent;
  }
  ttap::Trace t_;
  ttap::EventTree tree_;
};

TEST_F(Synthetic, NestingLaunchesAndSteps) {
  const auto step = find("ProfilerStep#3"), mm = find("aten::mm"), k1 = find("gemm_kernel");
  const auto late = find("late_op"), nccl = find("ncclKernel_AllReduce_RING_LL_Sum_float");
  EXPECT_EQ(tree_.parent(mm), step);
  const auto r1 = tree_.launcher(k1);
  ASSERT_NE(r1, ttap::kNoEvent);
  EXPECT_EQ(t_.ts[r1], 12000);
  EXPECT_EQ(tree_.parent(r1), mm);
  EXPECT_EQ(tree_.owner_op(k1), mm);
  EXPECT_EQ(tree_.path_to_root(k1), (std::vector<ttap::EventId>{k1, r1, mm, step}));
  EXPECT_EQ(tree_.depth(k1), 3u);
  ASSERT_EQ(tree_.children(r1).size(), 1u);
  EXPECT_EQ(tree_.children(r1)[0], k1);
  // late_op ends 5 us after the step: moved up to a root, and counted.
  EXPECT_EQ(tree_.parent(late), ttap::kNoEvent);
  EXPECT_EQ(tree_.diagnostics().partial_overlaps, 1u);
  ASSERT_EQ(tree_.steps().size(), 1u);
  EXPECT_EQ(tree_.steps()[0].number, 3);
  EXPECT_EQ(tree_.step_of(k1), 0);
  EXPECT_EQ(tree_.step_of(nccl), 0);  // launched from thread 2 inside the step's span
  EXPECT_EQ(tree_.diagnostics().gpu_without_launch, 0u);
}

TEST_F(Synthetic, GpuTimelineByHand) {
  // Scope: no GPU step annotation, so [20, 86]: total 66. Busy = [20,60] + [70,80] +
  // [85,86] = 51; idle 15. Compute = K1 20 + K4 1 = 21; comm 30, of which [40,60] = 20 is
  // not under compute; memcpy 10, all exposed.
  const auto tl = ttap::gpu_timeline(t_, tree_);
  ASSERT_EQ(tl.size(), 1u);
  EXPECT_EQ(tl[0].total, 66000);
  EXPECT_EQ(tl[0].busy, 51000);
  EXPECT_EQ(tl[0].idle, 15000);
  EXPECT_EQ(tl[0].computation, 21000);
  EXPECT_EQ(tl[0].communication, 30000);
  EXPECT_EQ(tl[0].exposed_communication, 20000);
  EXPECT_EQ(tl[0].memcpy, 10000);
  EXPECT_EQ(tl[0].exposed_memcpy, 10000);
  EXPECT_FALSE(tl[0].from_steps);
}

TEST_F(Synthetic, CategoriesOpsKernelsLaunchesSteps) {
  std::map<std::string, int64_t> by_cat;
  for (const auto& r : ttap::category_breakdown(t_, tree_)) by_cat[std::string(ttap::op_category_name(r.category))] = r.kernel_time;
  EXPECT_EQ(by_cat["communication"], 30000);
  EXPECT_EQ(by_cat["GEMM"], 20000);
  EXPECT_EQ(by_cat["memcpy"], 10000);
  EXPECT_EQ(by_cat["elementwise"], 1000);  // K4, launched by aten::copy_
  const auto ops = ttap::ops_summary(t_, tree_);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].name, "nccl:all_reduce");
  EXPECT_EQ(ops[2].name, "aten::copy_");  // memcpy 10 + K4 1 = 11 us
  EXPECT_EQ(ops[2].direct_kernel_time, 11000);
  EXPECT_EQ(ops[2].kernel_count, 2);
  // Launch delays: K1 20-12 = 8, M2 70-61 = 9, NCCL 30-25 = 5, K4 85-64 = 21.
  const auto ls = ttap::launch_stats(t_, tree_);
  EXPECT_EQ(ls.launches, 4);
  EXPECT_EQ(ls.launch_delay_max, 21000);
  EXPECT_DOUBLE_EQ(ls.launch_delay_mean, 10750.0);
  EXPECT_EQ(ls.short_kernels, 1);  // K4: 1 us kernel, 3 us launch
  const auto steps = ttap::step_breakdown(t_, tree_);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].duration, 100000);
  EXPECT_EQ(steps[0].gpu_busy, 51000);
  EXPECT_EQ(steps[0].memcpy, 10000);
  EXPECT_EQ(steps[0].kernels, 4);
}

TEST(Intervals, MergeSubtractClip) {
  const auto a = ttap::merge_intervals({{5, 10}, {0, 3}, {2, 4}, {10, 12}, {20, 20}});
  EXPECT_EQ(a, (std::vector<ttap::Interval>{{0, 4}, {5, 12}}));
  EXPECT_EQ(ttap::total_length(a), 11);
  const auto b = ttap::merge_intervals({{3, 6}, {11, 30}});
  EXPECT_EQ(ttap::subtract_length(a, b), 11 - 1 - 1 - 1);  // [3,4], [5,6], [11,12]
  EXPECT_EQ(ttap::clipped_length(a, 2, 6), 3);
}

// The controlled pair: the same ResNet50 job with DataLoader num_workers=0 and 4.
TEST(RealTraces, DataLoaderShareSeparatesTheControlledPair) {
  auto loader_share = [](const char* name) {
    const ttap::Trace t = ttap::load_trace(data(name));
    const ttap::EventTree tree = ttap::EventTree::build(t);
    const auto steps = ttap::step_breakdown(t, tree);
    EXPECT_EQ(steps.size(), 6u) << name;
    int64_t dur = 0, loader = 0;
    for (const auto& s : steps) {
      dur += s.duration;
      loader += s.dataloader;
    }
    return static_cast<double>(loader) / static_cast<double>(dur);
  };
  const double nw0 = loader_share("kineto_resnet50_v100_nw0.json.gz");
  const double nw4 = loader_share("kineto_resnet50_v100_nw4.json.gz");
  EXPECT_GT(nw0, 0.30);  // SOURCES.md: DataLoader ~40% of the step with num_workers=0
  EXPECT_LT(nw4, 0.03);  // ~1% with 4 workers
}

TEST(RealTraces, GemmKernelsBelongToGemmOps) {
  const ttap::Trace t = ttap::load_trace(data("tracelens_vit_nsfw_h100.json.gz"));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  size_t gemm = 0;
  for (ttap::EventId g : tree.gpu_events()) {
    if (t.name_of(g).find("gemm") == std::string_view::npos) continue;
    ++gemm;
    const ttap::EventId owner = tree.owner_op(g);
    ASSERT_NE(owner, ttap::kNoEvent) << t.name_of(g);
    EXPECT_EQ(t.name_of(owner), "aten::addmm");
    // The path climbs to the ProfilerStep annotation.
    bool reaches_step = false;
    for (ttap::EventId e : tree.path_to_root(g)) reaches_step |= ttap::profiler_step_number(t.name_of(e)) == 6;
    EXPECT_TRUE(reaches_step);
  }
  EXPECT_EQ(gemm, 73u);
}

}  // namespace

namespace {

// Correlation ids far apart (several profiling sessions in one file) take the sorted
// lookup instead of the direct table; the links must be the same.
TEST(Tree, SparseCorrelationIdsStillLink) {
  std::string json = R"({"traceEvents":[)";
  for (int i = 0; i < 50; ++i) {
    const long corr = 1 + static_cast<long>(i) * 1000000007L;
    const int ts = i * 100;
    if (i) json += ",";
    json += R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":)" + std::to_string(ts) + R"(,"dur":50},)";
    json += R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)" + std::to_string(ts + 1) +
            R"(,"dur":5,"args":{"correlation":)" + std::to_string(corr) + "}},";
    json += R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":)" + std::to_string(ts + 20) +
            R"(,"dur":10,"args":{"stream":7,"correlation":)" + std::to_string(corr) + "}}";
  }
  json += "]}";
  const ttap::Trace t = ttap::load_trace(ttap::test::temp_file("sparse.json", json));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  ASSERT_EQ(tree.gpu_events().size(), 50u);
  for (ttap::EventId g : tree.gpu_events()) {
    const ttap::EventId l = tree.launcher(g);
    ASSERT_NE(l, ttap::kNoEvent);
    EXPECT_EQ(t.correlation[l], t.correlation[g]);
    EXPECT_EQ(t.ts[g] - t.ts[l], 19000);
    EXPECT_EQ(t.name_of(tree.owner_op(g)), "aten::mm");
  }
  EXPECT_EQ(tree.diagnostics().gpu_without_launch, 0u);
}

}  // namespace
