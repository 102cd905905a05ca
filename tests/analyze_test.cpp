// Analyses: the interval helpers, the GPU timeline, launch statistics and the step
// breakdown. Synthetic traces have every expected figure worked out by hand in the
// comments; the real controlled pair (ResNet50 with DataLoader num_workers=0 and 4) is
// checked against tests/tools/compute_expected.py (section "analyze"), which recomputes
// the per-step figures from the JSON with Python.
#include <gtest/gtest.h>

#include <map>

#include "suite_support.hpp"
#include "ttap/analyze.hpp"
#include "ttap/load.hpp"

namespace {

using ttap::EventId;
using ttap::Interval;
using ttap::suite::data_path;
using ttap::suite::write_file;

constexpr int64_t us = 1000;  // ns

// ---- Interval helpers --------------------------------------------------------------------

TEST(Intervals, MergeDropsEmptyJoinsTouchingAndNested) {
  // [0,3]+[2,4] overlap -> [0,4]; [5,10]+[10,12] touch -> [5,12]; [6,7] nested in it;
  // [20,20] and [30,25] are empty and dropped.
  const auto m = ttap::merge_intervals({{5, 10}, {20, 20}, {0, 3}, {10, 12}, {6, 7}, {2, 4}, {30, 25}});
  EXPECT_EQ(m, (std::vector<Interval>{{0, 4}, {5, 12}}));
  EXPECT_EQ(ttap::total_length(m), 4 + 7);
  EXPECT_TRUE(ttap::merge_intervals({}).empty());
  EXPECT_EQ(ttap::total_length({}), 0);
}

TEST(Intervals, SubtractLength) {
  const auto a = ttap::merge_intervals({{0, 10}, {20, 30}, {40, 50}});  // 30 long
  // b covers [5,10] of the first, [20,30] whole (b's [18,32] sticks out both sides), none of the third.
  const auto b = ttap::merge_intervals({{5, 12}, {18, 32}, {35, 40}});
  EXPECT_EQ(ttap::subtract_length(a, b), 30 - 5 - 10);
  // One long b interval spanning several a intervals: [0,100] covers everything.
  EXPECT_EQ(ttap::subtract_length(a, {{0, 100}}), 0);
  // Disjoint b: nothing removed.
  EXPECT_EQ(ttap::subtract_length(a, {{10, 20}, {30, 40}}), 30);
  EXPECT_EQ(ttap::subtract_length({}, b), 0);
  EXPECT_EQ(ttap::subtract_length(a, {}), 30);
  // Several b intervals inside one a interval: [0,10] minus [1,2], [3,4], [8,9] = 7.
  EXPECT_EQ(ttap::subtract_length({{0, 10}}, {{1, 2}, {3, 4}, {8, 9}}), 7);
}

TEST(Intervals, ClippedLength) {
  const auto a = ttap::merge_intervals({{0, 10}, {20, 30}, {40, 50}});
  EXPECT_EQ(ttap::clipped_length(a, 5, 45), 5 + 10 + 5);
  EXPECT_EQ(ttap::clipped_length(a, 10, 20), 0);   // exactly the gap
  EXPECT_EQ(ttap::clipped_length(a, -100, 100), 30);
  EXPECT_EQ(ttap::clipped_length(a, 25, 26), 1);
  EXPECT_EQ(ttap::clipped_length(a, 50, 60), 0);   // starts where the last one ends
  EXPECT_EQ(ttap::clipped_length(a, 30, 30), 0);
}

// ---- One small trace through every analysis -----------------------------------------------

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

class SyntheticAnalyses : public ::testing::Test {
 protected:
  void SetUp() override {
    t_ = ttap::load_trace(write_file("synthetic.json", kTrace));
    tree_ = ttap::EventTree::build(t_);
  }
  ttap::Trace t_;
  ttap::EventTree tree_;
};

TEST_F(SyntheticAnalyses, GpuTimelineByHand) {
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

TEST_F(SyntheticAnalyses, CategoriesOpsKernelsLaunchesSteps) {
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

// ---- GPU timeline ------------------------------------------------------------------------

// Device 0 (pid 0), streams 7 and 8, times in us, with a GPU-side ProfilerStep#1 [10,110]
// that sets the scope:
//   Ka  kernel  s7 [0,20]    -> clipped to [10,20]         compute
//   Kb  kernel  s7 [30,50]                                  compute
//   CM  nccl    s8 [40,70]                                  communication
//   MS  memset  s7 [60,65]                                  compute (memsets count as compute)
//   MC1 memcpy  s7 [45,48]   all under Kb                  memcpy
//   MC2 memcpy  s8 [75,90]                                  memcpy
//   Kc  kernel  s7 [80,85]   inside MC2                    compute
//   Kd  kernel  s7 [100,120] -> clipped to [100,110]       compute
//   Ke  kernel  s7 [115,130] outside the scope: ignored
// computation = 10+20+5+5+10 = 50; communication = 30; exposed comm = [40,70] minus
// ([40,50] u [60,65]) = 15; memcpy = 3+15 = 18; exposed memcpy = MC1 0 + MC2 minus Kc 10 = 10;
// busy = [10,20] u [30,70] u [75,90] u [100,110] = 10+40+15+10 = 75; total 100; idle 25.
// (computation + exposed comm + exposed memcpy = busy.)
// Device 1 (pid 1): no step annotation, so its scope is its GPU activity: kernels [200,210]
// and [220,240] -> total 40, busy 30, idle 10, computation 30.
constexpr const char* kTimeline = R"json({"traceEvents":[
{"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#1","pid":0,"tid":7,"ts":10,"dur":100,"args":{"device":0}},
{"ph":"X","cat":"kernel","name":"Ka","pid":0,"tid":7,"ts":0,"dur":20,"args":{"device":0,"stream":7}},
{"ph":"X","cat":"kernel","name":"Kb","pid":0,"tid":7,"ts":30,"dur":20,"args":{"device":0,"stream":7}},
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":8,"ts":40,"dur":30,"args":{"device":0,"stream":8}},
{"ph":"X","cat":"gpu_memset","name":"Memset (Device)","pid":0,"tid":7,"ts":60,"dur":5,"args":{"device":0,"stream":7}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoD (Device -> Device)","pid":0,"tid":7,"ts":45,"dur":3,"args":{"device":0,"stream":7}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":8,"ts":75,"dur":15,"args":{"device":0,"stream":8}},
{"ph":"X","cat":"kernel","name":"Kc","pid":0,"tid":7,"ts":80,"dur":5,"args":{"device":0,"stream":7}},
{"ph":"X","cat":"kernel","name":"Kd","pid":0,"tid":7,"ts":100,"dur":20,"args":{"device":0,"stream":7}},
{"ph":"X","cat":"kernel","name":"Ke","pid":0,"tid":7,"ts":115,"dur":15,"args":{"device":0,"stream":7}},
{"ph":"X","cat":"kernel","name":"D1a","pid":1,"tid":3,"ts":200,"dur":10,"args":{"device":1,"stream":3}},
{"ph":"X","cat":"kernel","name":"D1b","pid":1,"tid":3,"ts":220,"dur":20,"args":{"device":1,"stream":3}}
]})json";

TEST(GpuTimeline, ScopedByGpuStepsTwoDevicesByHand) {
  const ttap::Trace t = ttap::load_trace(write_file("timeline.json", kTimeline));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  const auto scopes = ttap::gpu_scopes(t, tree);
  ASSERT_EQ(scopes.size(), 2u);
  EXPECT_EQ(scopes[0].device, 0);
  EXPECT_TRUE(scopes[0].from_steps);
  EXPECT_EQ(scopes[0].begin, 10 * us);
  EXPECT_EQ(scopes[0].end, 110 * us);
  EXPECT_EQ(scopes[1].device, 1);
  EXPECT_FALSE(scopes[1].from_steps);
  EXPECT_EQ(scopes[1].begin, 200 * us);
  EXPECT_EQ(scopes[1].end, 240 * us);
  // Events starting inside their device's scope: Kb, CM, MS, MC1, MC2, Kc, Kd; D1a, D1b.
  EXPECT_EQ(ttap::scoped_gpu_events(t, tree).size(), 9u);

  const auto tl = ttap::gpu_timeline(t, tree);
  ASSERT_EQ(tl.size(), 2u);
  const ttap::GpuTimeline& g = tl[0];
  EXPECT_EQ(g.device, 0);
  EXPECT_TRUE(g.from_steps);
  EXPECT_EQ(g.begin, 10 * us);
  EXPECT_EQ(g.end, 110 * us);
  EXPECT_EQ(g.total, 100 * us);
  EXPECT_EQ(g.computation, 50 * us);
  EXPECT_EQ(g.communication, 30 * us);
  EXPECT_EQ(g.exposed_communication, 15 * us);
  EXPECT_EQ(g.memcpy, 18 * us);
  EXPECT_EQ(g.exposed_memcpy, 10 * us);
  EXPECT_EQ(g.busy, 75 * us);
  EXPECT_EQ(g.idle, 25 * us);
  EXPECT_EQ(g.computation + g.exposed_communication + g.exposed_memcpy, g.busy);

  const ttap::GpuTimeline& h = tl[1];
  EXPECT_EQ(h.device, 1);
  EXPECT_FALSE(h.from_steps);
  EXPECT_EQ(h.total, 40 * us);
  EXPECT_EQ(h.busy, 30 * us);
  EXPECT_EQ(h.idle, 10 * us);
  EXPECT_EQ(h.computation, 30 * us);
  EXPECT_EQ(h.communication, 0);
  EXPECT_EQ(h.memcpy, 0);
}

TEST(GpuTimeline, CommunicationKernelNames) {
  EXPECT_TRUE(ttap::is_communication_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  EXPECT_TRUE(ttap::is_communication_kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t"));
  EXPECT_TRUE(ttap::is_communication_kernel("void rccl_kernel<>()"));
  EXPECT_TRUE(ttap::is_communication_kernel("void vllm::cross_device_reduce_1stage<float, 8>()"));
  EXPECT_TRUE(ttap::is_communication_kernel("void multimem_all_reduce_kernel<float>()"));
  EXPECT_FALSE(ttap::is_communication_kernel("volta_sgemm_128x64_nn"));
  EXPECT_FALSE(ttap::is_communication_kernel("void at::native::reduce_kernel<512, 1>()"));
}

// ---- Launch statistics and step breakdown ------------------------------------------------

// Thread (1,1), times in us. ProfilerStep#1 [0,45], ProfilerStep#2 [45,100].
//   L1 cudaLaunchKernel [0,5]   corr 1 -> K1 kernel [10,12]  delay 10, shorter than its call (2 < 5)
//   L2 cudaLaunchKernel [20,24] corr 2 -> K2 kernel [26,36]  delay 6
//   L3 cudaLaunchKernel [30,33] corr 3 -> K3 kernel [50,51]  delay 20, short (1 < 3)
//   L4 cudaMemcpyAsync  [40,46] corr 4 -> memcpy    [60,61]  delay 20 (a copy: never "short")
//   DL DataLoader __next__ [47,49] in step 2
//   L5 cudaLaunchKernel [70,72] corr 5 -> K5 kernel [72,74]  delay 2, as long as its call: not short
//   orphan kernel [30,31], correlation 99: no launch, not counted
// launches 5; delays {2,6,10,20,20}: mean 11.6, p50 10, p95 20, max 20 us; call mean
// (5+4+3+6+2)/5 = 4 us; short kernels 2 (K1, K3) for 3 us.
// Steps: #1 [0,45]: GPU events K1, K2, K3, memcpy (launched in it) + orphan (starts in it)
// = 5; busy = union clipped to [0,45] = K1 2 + K2 10 (orphan inside K2) = 12 us; memcpy 0;
// dataloader 0. #2 [45,100]: K5 -> 1 event; busy K3 1 + memcpy 1 + K5 2 = 4 us; memcpy 1 us;
// dataloader 2 us.
constexpr const char* kLaunches = R"json({"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":45},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":4,"args":{"correlation":2}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":30,"dur":3,"args":{"correlation":3}},
{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":40,"dur":6,"args":{"correlation":4}},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":45,"dur":55},
{"ph":"X","cat":"cpu_op","name":"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__","pid":1,"tid":1,"ts":47,"dur":2},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":70,"dur":2,"args":{"correlation":5}},
{"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":10,"dur":2,"args":{"correlation":1,"stream":7}},
{"ph":"X","cat":"kernel","name":"K2","pid":0,"tid":7,"ts":26,"dur":10,"args":{"correlation":2,"stream":7}},
{"ph":"X","cat":"kernel","name":"K3","pid":0,"tid":7,"ts":50,"dur":1,"args":{"correlation":3,"stream":7}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":60,"dur":1,"args":{"correlation":4,"stream":7,"bytes":1024}},
{"ph":"X","cat":"kernel","name":"K5","pid":0,"tid":7,"ts":72,"dur":2,"args":{"correlation":5,"stream":7}},
{"ph":"X","cat":"kernel","name":"orphan","pid":0,"tid":8,"ts":30,"dur":1,"args":{"correlation":99,"stream":8}}
]})json";

TEST(LaunchStats, ByHand) {
  const ttap::Trace t = ttap::load_trace(write_file("launches.json", kLaunches));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  const ttap::LaunchStats s = ttap::launch_stats(t, tree);
  EXPECT_EQ(s.launches, 5);
  EXPECT_DOUBLE_EQ(s.launch_delay_mean, 11.6 * us);
  EXPECT_EQ(s.launch_delay_p50, 10 * us);
  EXPECT_EQ(s.launch_delay_p95, 20 * us);
  EXPECT_EQ(s.launch_delay_max, 20 * us);
  EXPECT_EQ(s.launch_call_mean, 4 * us);
  EXPECT_EQ(s.short_kernels, 2);
  EXPECT_EQ(s.short_kernel_time, 3 * us);
  EXPECT_EQ(tree.diagnostics().gpu_without_launch, 1u);
  // The copy is attributed by its launch, and carries its byte count.
  const EventId copy = ttap::suite::find_event(t, "Memcpy HtoD (Pageable -> Device)");
  ASSERT_NE(t.copy(copy), nullptr);
  EXPECT_EQ(t.copy(copy)->bytes, 1024);
}

TEST(LaunchStats, NoGpuWorkGivesZeros) {
  const ttap::Trace t = ttap::load_trace(data_path("hta_cpu_only.json.gz"));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  const ttap::LaunchStats s = ttap::launch_stats(t, tree);
  EXPECT_EQ(s.launches, 0);
  EXPECT_EQ(s.launch_delay_max, 0);
  EXPECT_EQ(s.short_kernels, 0);
}

TEST(StepBreakdown, ByHand) {
  const ttap::Trace t = ttap::load_trace(write_file("steps.json", kLaunches));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  const auto rows = ttap::step_breakdown(t, tree);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].number, 1);
  EXPECT_EQ(rows[0].duration, 45 * us);
  EXPECT_EQ(rows[0].kernels, 5);
  EXPECT_EQ(rows[0].gpu_busy, 12 * us);
  EXPECT_EQ(rows[0].memcpy, 0);
  EXPECT_EQ(rows[0].dataloader, 0);
  EXPECT_EQ(rows[1].number, 2);
  EXPECT_EQ(rows[1].duration, 55 * us);
  EXPECT_EQ(rows[1].kernels, 1);
  EXPECT_EQ(rows[1].gpu_busy, 4 * us);
  EXPECT_EQ(rows[1].memcpy, 1 * us);
  EXPECT_EQ(rows[1].dataloader, 2 * us);
  EXPECT_TRUE(ttap::is_dataloader_event("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"));
  EXPECT_FALSE(ttap::is_dataloader_event("DataLoader.__init__"));
  EXPECT_FALSE(ttap::is_dataloader_event("aten::to"));
}

// ---- The controlled real pair: DataLoader num_workers=0 vs 4 -----------------------------

struct StepExpectation {
  int64_t duration, dataloader, gpu_busy, memcpy;
};

void check_steps(const char* file, const std::vector<StepExpectation>& expected, double share_lo, double share_hi) {
  SCOPED_TRACE(file);
  const ttap::Trace t = ttap::load_trace(data_path(file));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  const auto rows = ttap::step_breakdown(t, tree);
  ASSERT_EQ(rows.size(), expected.size());
  int64_t duration = 0, loader = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(rows[i].number));
    EXPECT_EQ(rows[i].number, static_cast<int64_t>(i) + 5);
    EXPECT_EQ(rows[i].duration, expected[i].duration);
    EXPECT_EQ(rows[i].dataloader, expected[i].dataloader);
    EXPECT_EQ(rows[i].gpu_busy, expected[i].gpu_busy);
    EXPECT_EQ(rows[i].memcpy, expected[i].memcpy);
    duration += rows[i].duration;
    loader += rows[i].dataloader;
  }
  const double share = static_cast<double>(loader) / static_cast<double>(duration);
  EXPECT_GT(share, share_lo);
  EXPECT_LT(share, share_hi);
}

TEST(StepBreakdown, DataLoaderShareNw0VersusNw4) {
  // compute_expected.py "analyze": per ProfilerStep#5..#10, the step's duration, the merged
  // length of the DataLoader __next__ spans starting in it, and the union of GPU activity
  // (and of memcpys) clipped to the step, all in ns. Shares: nw0 39.64%, nw4 1.02%.
  check_steps("kineto_resnet50_v100_nw0.json.gz",
              {{176078000, 68694000, 89382000, 1941000},
               {173992000, 68777000, 99450000, 1947000},
               {176918000, 73418000, 97843000, 1931000},
               {181259000, 71425000, 107276000, 1938000},
               {176468000, 70844000, 94880000, 1937000},
               {164261000, 62633000, 98811000, 1798000}},
              0.39, 0.40);
  check_steps("kineto_resnet50_v100_nw4.json.gz",
              {{181565000, 4331000, 102843000, 3606000},
               {123884000, 83000, 100424000, 2948000},
               {126824000, 87000, 101801000, 2949000},
               {126272000, 1251000, 104727000, 2975000},
               {163461000, 1370000, 102484000, 3596000},
               {116146000, 1400000, 94498000, 2885000}},
              0.010, 0.011);
}

TEST(StepBreakdown, Nw0KernelsPerStep) {
  // compute_expected.py "tree": 1516 GPU events launched in each of the six steps.
  const ttap::Trace t = ttap::load_trace(data_path("kineto_resnet50_v100_nw0.json.gz"));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  for (const auto& r : ttap::step_breakdown(t, tree)) EXPECT_EQ(r.kernels, 1516) << "step " << r.number;
}

}  // namespace
