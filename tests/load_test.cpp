// The loader (load_trace) on every schema variant of the real test traces, on small inline
// traces written to a scratch folder, and on bad input.
//
// Expected figures on real traces come from tests/tools/compute_expected.py (section
// "load"), which reads the same files with Python's json module (timestamps as Decimal, so
// the microsecond -> nanosecond conversion is exact) and shares no code with ttap. Figures
// on inline traces are worked out by hand in the comments.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <map>
#include <set>

#include "suite_support.hpp"
#include "ttap/analyze.hpp"
#include "ttap/load.hpp"
#include "ttap/summary_report.hpp"
#include "ttap/tree.hpp"

namespace {

using ttap::Category;
using ttap::EventId;
using ttap::kNoId;
using ttap::kNoString;
using ttap::Phase;
using ttap::suite::data_path;
using ttap::suite::write_file;

// ---- 2021 schema: capitalized categories, string tids ----------------------------------

TEST(LoadKineto2021, CapitalizedCategoriesMapToTheCurrentOnes) {
  const ttap::Trace t = ttap::load_trace(data_path("kineto_resnet50_v100_nw0.json.gz"));
  EXPECT_EQ(t.schema_version, 1);
  // Every event's normalized category follows from the text it was written with.
  const std::map<std::string_view, Category> expected{{"Operator", Category::CpuOp},   {"Runtime", Category::CudaRuntime},
                                                      {"Kernel", Category::Kernel},     {"Memcpy", Category::GpuMemcpy},
                                                      {"Memset", Category::GpuMemset},  {"Trace", Category::TraceSpan}};
  std::map<std::string, size_t> by_raw;
  size_t instants = 0;
  for (EventId e = 0; e < t.size(); ++e) {
    if (t.phase[e] == Phase::Instant) {
      ++instants;
      EXPECT_EQ(t.raw_category[e], kNoString);  // the two 'i' events without "cat"
      EXPECT_EQ(t.category[e], Category::Other);
      continue;
    }
    const std::string_view raw = t.strings.view(t.raw_category[e]);
    ++by_raw[std::string(raw)];
    auto it = expected.find(raw);
    ASSERT_NE(it, expected.end()) << "unexpected category text " << raw;
    EXPECT_EQ(t.category[e], it->second) << raw;
  }
  // compute_expected.py: Counter((ph, cat)): X Operator 23646, Runtime 11923, Kernel 8772,
  // Memset 312, Memcpy 12, Trace 1; 'i' 12840 of which 12838 are [memory].
  EXPECT_EQ(by_raw, (std::map<std::string, size_t>{{"Operator", 23646}, {"Runtime", 11923}, {"Kernel", 8772},
                                                   {"Memset", 312},     {"Memcpy", 12},     {"Trace", 1}}));
  EXPECT_EQ(instants, 2u);

  // First "Runtime" event in the file: cudaMemcpyAsync, ts 1623142623529088 us, correlation 34417.
  EventId first_runtime = ttap::kNoEvent;
  for (EventId e = 0; e < t.size() && first_runtime == ttap::kNoEvent; ++e)
    if (t.category[e] == Category::CudaRuntime) first_runtime = e;
  ASSERT_NE(first_runtime, ttap::kNoEvent);
  EXPECT_EQ(t.name_of(first_runtime), "cudaMemcpyAsync");
  EXPECT_EQ(t.ts[first_runtime], 1623142623529088000LL);
  EXPECT_EQ(t.correlation[first_runtime], 34417);

  // Kernel times, exactly: sum of dur 591532000 ns; sum of ts mod 2^64 15767417324343613064.
  int64_t dur_sum = 0;
  uint64_t ts_sum = 0;
  for (EventId e = 0; e < t.size(); ++e) {
    if (t.category[e] != Category::Kernel) continue;
    dur_sum += t.dur[e];
    ts_sum += static_cast<uint64_t>(t.ts[e]);
  }
  EXPECT_EQ(dur_sum, 591532000);
  EXPECT_EQ(ts_sum, 15767417324343613064ULL);
}

TEST(LoadKineto2021, StringAndNumericTidsAreOneThreadAndStreamsAreLabels) {
  const ttap::Trace t = ttap::load_trace(data_path("kineto_resnet50_v100_nw0.json.gz"));
  // Six (pid, tid) pairs once "25738" and 25738 are one: (25738,25738), (25738,25772),
  // (0,"stream 7"), ("Traces","PyTorch Profiler"), ("Traces","Trace PyTorch Profiler"), ("","").
  EXPECT_EQ(t.tracks.size(), 6u);
  size_t gpu_tracks = 0;
  for (const ttap::Track& tr : t.tracks) {
    if (!tr.gpu) continue;
    ++gpu_tracks;
    EXPECT_EQ(t.strings.view(tr.tid_label), "stream 7");
    EXPECT_EQ(tr.stream, 7);  // from args "stream": 7, not from the label
    EXPECT_EQ(tr.device, 0);  // pid 0
    EXPECT_EQ(tr.pid, 0);
  }
  EXPECT_EQ(gpu_tracks, 1u);

  const EventId step = ttap::suite::find_event(t, "ProfilerStep#5");
  ASSERT_NE(step, ttap::kNoEvent);
  const ttap::Track& main = t.track_of(step);
  EXPECT_EQ(main.pid, 25738);
  EXPECT_EQ(main.tid, 25738);  // written "25738" (text) on ops
  EXPECT_EQ(main.tid_label, kNoString);
  EXPECT_EQ(t.strings.view(main.thread_name), "thread 25738 (python)");
  EXPECT_EQ(t.strings.view(main.process_name), "python");
  EXPECT_FALSE(main.gpu);

  // [memory] events carry their tid as a number (25738, 25772) while ops and runtime
  // calls write it as text ("25738", "25772"): they must land on the ops' tracks.
  // compute_expected.py: 12838 [memory] events, 6928 on (25738, 25738) and 5910 on
  // (25738, 25772); sum of Bytes 19267840; last ts 1623142624509319 us.
  ASSERT_EQ(t.memory_events.size(), 12838u);
  int64_t bytes = 0;
  std::map<int64_t, size_t> mem_by_tid;
  std::set<ttap::TrackId> mem_tracks;
  for (const auto& m : t.memory_events) {
    bytes += m.bytes;
    ++mem_by_tid[t.tracks[m.track].tid];
    mem_tracks.insert(m.track);
  }
  EXPECT_EQ(bytes, 19267840);
  EXPECT_EQ(mem_by_tid, (std::map<int64_t, size_t>{{25738, 6928}, {25772, 5910}}));
  // Ops on both threads (X events per (pid, tid): "25738" Operator 14994, "25772" 8652).
  std::set<ttap::TrackId> op_tracks;
  std::map<int64_t, size_t> ops_by_tid;
  for (EventId e = 0; e < t.size(); ++e) {
    if (t.category[e] != Category::CpuOp) continue;
    op_tracks.insert(t.track[e]);
    ++ops_by_tid[t.track_of(e).tid];
  }
  EXPECT_EQ(ops_by_tid, (std::map<int64_t, size_t>{{25738, 14994}, {25772, 8652}}));
  EXPECT_EQ(mem_tracks, op_tracks);
  EXPECT_EQ(t.memory_events.back().ts, 1623142624509319000LL);
}

TEST(LoadKineto2021, FlowsDevicePropertiesKept) {
  const ttap::Trace t = ttap::load_trace(data_path("kineto_resnet50_v100_nw0.json.gz"));
  // compute_expected.py: flows s/async 9096 + f/async 9096.
  ASSERT_EQ(t.flows.size(), 18192u);
  size_t starts = 0;
  for (const auto& f : t.flows) {
    starts += f.phase == 's';
    EXPECT_EQ(t.strings.view(f.category), "async");
  }
  EXPECT_EQ(starts, 9096u);
  // deviceProperties[0]: Tesla V100-DGXS-32GB, 34084028416 bytes, sm 7.0, 80 SMs, 2048
  // threads per SM, warp 32.
  ASSERT_EQ(t.devices.size(), 4u);  // compute_expected.py: len(deviceProperties)
  const ttap::DeviceProperties* d = t.device(0);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->name, "Tesla V100-DGXS-32GB");
  EXPECT_EQ(d->total_global_mem, 34084028416LL);
  EXPECT_EQ(d->compute_major, 7);
  EXPECT_EQ(d->compute_minor, 0);
  EXPECT_EQ(d->num_sms, 80);
  EXPECT_EQ(d->max_threads_per_sm, 2048);
  EXPECT_EQ(d->warp_size, 32);
  EXPECT_FALSE(t.distributed.present);
}

// ---- Float (nanosecond-resolution) timestamps ------------------------------------------

TEST(LoadFloatTimestamps, RealTraceConvertsExactly) {
  const ttap::Trace t = ttap::load_trace(data_path("hta_ddp_cnn_v100_nsres.json.gz"));
  // compute_expected.py with Decimal: 45420 X events; sum of ts_ns mod 2^64 =
  // 14893143301292917551, sum of dur_ns = 3437226132; the first X event is
  // "autograd::engine::evaluate_function: DivBackward1" at 1712195495519.689047 ms, 63.813 us.
  size_t complete = 0;
  uint64_t ts_sum = 0;
  int64_t dur_sum = 0;
  for (EventId e = 0; e < t.size(); ++e) {
    if (t.phase[e] != Phase::Complete) continue;
    ++complete;
    ts_sum += static_cast<uint64_t>(t.ts[e]);
    dur_sum += t.dur[e];
  }
  EXPECT_EQ(complete, 45420u);
  EXPECT_EQ(ts_sum, 14893143301292917551ULL);
  EXPECT_EQ(dur_sum, 3437226132LL);
  EXPECT_EQ(t.name_of(0), "autograd::engine::evaluate_function: DivBackward1");
  EXPECT_EQ(t.ts[0], 1712195495519689047LL);
  EXPECT_EQ(t.dur[0], 63813);
}

TEST(LoadFloatTimestamps, InlineValuesByHand) {
  // ts in us -> ns: 1712195495406752.8 -> ...800 (a double cannot hold this exactly: the
  // parse must work on the digits). 0.0005 us = 0.5 ns rounds half up to 1; 12.3456789 us
  // -> 12345.6789 ns -> 12346; 1.5e3 us -> 1500000 ns; dur 1.9994 -> 1999, 1.9995 -> 2000.
  const std::string path = write_file("float_ts.json", R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1712195495406752.8,"dur":1.9994},
    {"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":0.0005,"dur":1.9995},
    {"ph":"X","cat":"cpu_op","name":"c","pid":1,"tid":1,"ts":12.3456789,"dur":0},
    {"ph":"X","cat":"cpu_op","name":"d","pid":1,"tid":1,"ts":1.5e3,"dur":7}]})");
  const ttap::Trace t = ttap::load_trace(path);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t.ts[0], 1712195495406752800LL);
  EXPECT_EQ(t.dur[0], 1999);
  EXPECT_EQ(t.ts[1], 1);
  EXPECT_EQ(t.dur[1], 2000);
  EXPECT_EQ(t.ts[2], 12346);
  EXPECT_EQ(t.ts[3], 1500000);
  EXPECT_EQ(t.dur[3], 7000);
  // 1428625731896.1795 us: 0.1795 us rounds to 180 ns; dur 47151.3954 us -> 47151395 ns;
  // dur 0.001 us -> 1 ns.
  const ttap::Trace u = ttap::load_trace(write_file("float_ts2.json", R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1428625731896.1795,"dur":47151.3954},
    {"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":1,"dur":0.001}]})"));
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u.ts[0], 1428625731896180LL);
  EXPECT_EQ(u.dur[0], 47151395LL);
  EXPECT_EQ(u.dur[1], 1);
}

// ---- ROCm: HIP names and integers written as text --------------------------------------

TEST(LoadRocm, Mi250HipRuntimeAndStringIntegers) {
  // hipMemcpyWithStream's args hold "stream": "0x0" and "size": "2560" (text).
  const ttap::Trace t = ttap::load_trace(data_path("hta_mi250_toy.json.gz"));
  // compute_expected.py: hipLaunchKernel 12, hipGetDevicePropertiesR0600 4,
  // hipMemcpyWithStream 2, hipExtModuleLaunchKernel 2, hipDeviceSynchronize 1; 14 kernels.
  std::map<std::string, int> runtime;
  int kernels = 0;
  for (EventId e = 0; e < t.size(); ++e) {
    if (t.category[e] == Category::CudaRuntime) ++runtime[std::string(t.name_of(e))];
    kernels += t.category[e] == Category::Kernel;
  }
  EXPECT_EQ(runtime, (std::map<std::string, int>{{"hipLaunchKernel", 12},
                                                 {"hipGetDevicePropertiesR0600", 4},
                                                 {"hipMemcpyWithStream", 2},
                                                 {"hipExtModuleLaunchKernel", 2},
                                                 {"hipDeviceSynchronize", 1}}));
  EXPECT_EQ(kernels, 14);
  // The first hipMemcpyWithStream: ts 4203669603438.301 us, correlation 117; its copy
  // "Memcpy HtoD (Host -> Device)" at 4203669603454.206 us for 22.441 us on device 2, stream 0.
  const EventId call = ttap::suite::find_event(t, "hipMemcpyWithStream");
  ASSERT_NE(call, ttap::kNoEvent);
  EXPECT_EQ(t.ts[call], 4203669603438301LL);
  EXPECT_EQ(t.correlation[call], 117);
  const ttap::EventTree tree = ttap::EventTree::build(t);
  EventId copy = ttap::kNoEvent;
  for (EventId g : tree.gpu_events())
    if (tree.launcher(g) == call) copy = g;
  ASSERT_NE(copy, ttap::kNoEvent);
  EXPECT_EQ(t.category[copy], Category::GpuMemcpy);
  EXPECT_EQ(t.ts[copy], 4203669603454206LL);
  EXPECT_EQ(t.dur[copy], 22441);
  EXPECT_EQ(t.track_of(copy).device, 2);
  EXPECT_EQ(t.track_of(copy).stream, 0);
  ASSERT_EQ(t.devices.size(), 4u);
  EXPECT_EQ(t.devices[0].name, "AMD Radeon Graphics");
  EXPECT_EQ(t.devices[0].warp_size, 64);
  EXPECT_EQ(t.devices[0].num_sms, 104);
}

TEST(LoadRocm, TextIntegersInArgsAreParsed) {
  // "0x1f" = 31, "0x10" = 16, "2560" = 2560, "2" = 2.
  const std::string path = write_file("rocm_text_ints.json", R"({"traceEvents":[
    {"ph":"X","cat":"kernel","name":"k","pid":9,"tid":3,"ts":10,"dur":5,
     "args":{"device":"2","stream":"0x1f","correlation":"2560","External id":"0x10"}}]})");
  const ttap::Trace t = ttap::load_trace(path);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.track_of(0).device, 2);
  EXPECT_EQ(t.track_of(0).stream, 31);
  EXPECT_EQ(t.correlation[0], 2560);
  EXPECT_EQ(t.external_id[0], 16);
  // Text that is not an integer is an error naming the field.
  const std::string bad = write_file("rocm_bad_int.json", R"({"traceEvents":[
    {"ph":"X","cat":"kernel","name":"k","pid":9,"tid":3,"ts":10,"dur":5,"args":{"correlation":"12abc"}}]})");
  try {
    ttap::load_trace(bad);
    ADD_FAILURE() << "\"12abc\" accepted as an integer";
  } catch (const ttap::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("\"correlation\" must be an integer"), std::string::npos) << e.what();
  }
}

// ---- CPU-only, distributedInfo -----------------------------------------------------------

TEST(LoadCpuOnly, NoGpuTracksAndDistributedInfoKept) {
  const ttap::Trace t = ttap::load_trace(data_path("hta_cpu_only.json.gz"));
  // compute_expected.py: X user_annotation 11, cpu_op 4, Trace 1; distributedInfo gloo,
  // rank 34 of 300, 11 pg_config entries; baseTimeNanoseconds 1719853884000000000.
  std::map<Category, int> cats;
  for (EventId e = 0; e < t.size(); ++e)
    if (t.phase[e] == Phase::Complete) ++cats[t.category[e]];
  EXPECT_EQ(cats, (std::map<Category, int>{{Category::UserAnnotation, 11}, {Category::CpuOp, 4}, {Category::TraceSpan, 1}}));
  for (const auto& tr : t.tracks) EXPECT_FALSE(tr.gpu);
  EXPECT_EQ(t.base_time_ns, 1719853884000000000LL);
  ASSERT_TRUE(t.distributed.present);
  EXPECT_EQ(t.distributed.backend, "gloo");
  EXPECT_EQ(t.distributed.rank, 34);
  EXPECT_EQ(t.distributed.world_size, 300);
  // The whole object is kept as JSON text.
  ASSERT_FALSE(t.distributed.raw.empty());
  EXPECT_EQ(t.distributed.raw.front(), '{');
  EXPECT_EQ(t.distributed.raw.back(), '}');
  EXPECT_NE(t.distributed.raw.find("\"pg_config\""), std::string::npos);
  EXPECT_NE(t.distributed.raw.find("c180dae7743d700d8e30df1902fc6b1e_0"), std::string::npos);

  const ttap::EventTree tree = ttap::EventTree::build(t);
  EXPECT_TRUE(tree.gpu_events().empty());
  ASSERT_EQ(tree.steps().size(), 1u);
  EXPECT_EQ(tree.steps()[0].number, 551);
  EXPECT_TRUE(ttap::gpu_timeline(t, tree).empty());
}

// ---- python_function ---------------------------------------------------------------------

TEST(LoadPython, PythonIdsAndParentIds) {
  const ttap::Trace t = ttap::load_trace(data_path("tracelens_qwen05b_h100.json.gz"));
  // compute_expected.py: 4262 python_function events, 2 with "Python parent id": null.
  // In file order: #0 "threading.py(1032): _bootstrap" id 1 (no parent), #1
  // "threading.py(1075): _bootstrap_inner" id 2 parent 1, #100
  // "torch/cuda/__init__.py(441): __enter__" id 101 parent 64.
  std::vector<EventId> py;
  for (EventId e = 0; e < t.size(); ++e)
    if (t.category[e] == Category::PythonFunction) py.push_back(e);
  ASSERT_EQ(py.size(), 4262u);
  ASSERT_EQ(t.python_args.size(), 4262u);
  size_t roots = 0;
  for (EventId e : py) {
    ASSERT_NE(t.python(e), nullptr);
    roots += t.python(e)->parent_id == kNoId;
  }
  EXPECT_EQ(roots, 2u);
  EXPECT_EQ(t.name_of(py[0]), "threading.py(1032): _bootstrap");
  EXPECT_EQ(t.python(py[0])->python_id, 1);
  EXPECT_EQ(t.python(py[0])->parent_id, kNoId);
  EXPECT_EQ(t.ts[py[0]], 1428625731516983LL);  // 1428625731516.983 us
  EXPECT_EQ(t.name_of(py[1]), "threading.py(1075): _bootstrap_inner");
  EXPECT_EQ(t.python(py[1])->python_id, 2);
  EXPECT_EQ(t.python(py[1])->parent_id, 1);
  EXPECT_EQ(t.name_of(py[100]), "torch/cuda/__init__.py(441): __enter__");
  EXPECT_EQ(t.python(py[100])->python_id, 101);
  EXPECT_EQ(t.python(py[100])->parent_id, 64);
  // Non-python events have no python args.
  EXPECT_EQ(t.python(ttap::suite::find_event(t, "aten::embedding")), nullptr);
}

TEST(LoadPython, CurrentSchemaCategoriesBaseTimeAndInputDims) {
  const ttap::Trace t = ttap::load_trace(data_path("tracelens_qwen05b_h100.json.gz"));
  // Python (json.load, Counter of "cat"): cpu_op 4186, python_function 4262, kernel 1465,
  // cuda_runtime 1921; baseTimeNanoseconds 1751410836000000000.
  std::map<Category, size_t> cats;
  for (EventId e = 0; e < t.size(); ++e) ++cats[t.category[e]];
  EXPECT_EQ(cats[Category::CpuOp], 4186u);
  EXPECT_EQ(cats[Category::PythonFunction], 4262u);
  EXPECT_EQ(cats[Category::Kernel], 1465u);
  EXPECT_EQ(cats[Category::CudaRuntime], 1921u);
  EXPECT_EQ(t.base_time_ns, 1751410836000000000LL);
  // "Input Dims" of the first aten::embedding, stored compactly.
  const EventId emb = ttap::suite::find_event(t, "aten::embedding");
  ASSERT_NE(emb, ttap::kNoEvent);
  const ttap::OpArgs* a = t.op(emb);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(t.strings.view(a->input_dims), "[[151936,1024],[16,559],[],[],[]]");
}

// ---- Collectives (DDP) -------------------------------------------------------------------

TEST(LoadCollectives, DdpCollectiveArgsAndDistributedInfo) {
  const ttap::Trace t = ttap::load_trace(data_path("hta_ddp_cnn_v100_nsres.json.gz"));
  // compute_expected.py: 45 cpu_op events carry "Collective name": allreduce 25,
  // broadcast 10, wait 10; sum of "In msg nelems" 128051025. The first is
  // record_param_comms: allreduce, Float, 2049000 in and out, group size 1, ranks "[0]".
  ASSERT_EQ(t.collectives.size(), 45u);
  std::map<std::string, int> names;
  int64_t in_sum = 0;
  for (size_t i = 0; i < t.collectives.size(); ++i) {
    const auto& c = t.collectives[i];
    if (i > 0) {
      EXPECT_LT(t.collectives[i - 1].event, c.event);  // sorted by event
    }
    ++names[std::string(t.strings.view(c.collective_name))];
    in_sum += c.in_msg_nelems;
    EXPECT_EQ(t.category[c.event], Category::CpuOp);
    EXPECT_EQ(t.collective(c.event), &c);
  }
  EXPECT_EQ(names, (std::map<std::string, int>{{"allreduce", 25}, {"broadcast", 10}, {"wait", 10}}));
  EXPECT_EQ(in_sum, 128051025);
  const auto& first = t.collectives[0];
  EXPECT_EQ(t.name_of(first.event), "record_param_comms");
  EXPECT_EQ(t.strings.view(first.dtype), "Float");
  EXPECT_EQ(first.in_msg_nelems, 2049000);
  EXPECT_EQ(first.out_msg_nelems, 2049000);
  EXPECT_EQ(first.group_size, 1);
  EXPECT_EQ(t.strings.view(first.process_group_ranks), "[0]");
  EXPECT_EQ(t.collective(0), nullptr);  // the first event is not a collective
  // distributedInfo: nccl, rank 0 of 1, nccl_version 2.17.1 (kept in the raw text).
  ASSERT_TRUE(t.distributed.present);
  EXPECT_EQ(t.distributed.backend, "nccl");
  EXPECT_EQ(t.distributed.rank, 0);
  EXPECT_EQ(t.distributed.world_size, 1);
  EXPECT_NE(t.distributed.raw.find("\"nccl_version\": \"2.17.1\""), std::string::npos) << t.distributed.raw;
  // Flows: ac2g s 6401 + f 15023, fwdbwd s 905 + f 905 = 23234.
  EXPECT_EQ(t.flows.size(), 23234u);
}

// ---- B/E, instants, counters, [memory], metadata -----------------------------------------

TEST(LoadInline, BeginEndInstantsCountersMemory) {
  // Thread (1,2): B outer@100, B inner@110, E@120 (closes inner: 10 us), E@150 (closes
  // outer: 50 us), then a stray E (unmatched). B never-closed@200 gets dur 0 and counts as
  // unmatched. Instants: 'i' s=t and legacy 'I'. Counter "mem" with two numeric series and
  // one text arg (not a series). [memory] instant: +4096 bytes, totals 8192/16384, CUDA:0.
  // Two events of phases ttap does not use ('b', 'n') are counted and skipped.
  const std::string path = write_file("be.json", R"({"traceEvents":[
    {"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"trainer"}},
    {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"main"}},
    {"ph":"B","cat":"user_annotation","name":"outer","pid":1,"tid":2,"ts":100},
    {"ph":"B","cat":"cpu_op","name":"inner","pid":1,"tid":2,"ts":110},
    {"ph":"E","pid":1,"tid":2,"ts":120},
    {"ph":"i","cat":"cpu_instant_event","name":"mark","pid":1,"tid":2,"ts":130,"s":"t"},
    {"ph":"E","pid":1,"tid":2,"ts":150},
    {"ph":"E","pid":1,"tid":2,"ts":160},
    {"ph":"I","name":"legacy","pid":1,"tid":2,"ts":170},
    {"ph":"C","name":"mem","pid":1,"ts":180,"args":{"used":5.5,"free":2,"unit":"MB"}},
    {"ph":"i","name":"[memory]","pid":1,"tid":2,"ts":190,"s":"t",
     "args":{"Bytes":4096,"Total Allocated":8192,"Total Reserved":16384,"Device Type":1,"Device Id":0}},
    {"ph":"B","cat":"cpu_op","name":"open","pid":1,"tid":2,"ts":200},
    {"ph":"b","cat":"async","name":"a","id":1,"pid":1,"tid":2,"ts":210},
    {"ph":"n","cat":"async","name":"a","id":1,"pid":1,"tid":2,"ts":211},
    {"ph":"s","cat":"fwdbwd","name":"fwdbwd","id":7,"pid":1,"tid":2,"ts":212},
    {"ph":"f","cat":"fwdbwd","name":"fwdbwd","id":7,"pid":1,"tid":2,"ts":213,"bp":"e"}]})");
  const ttap::Trace t = ttap::load_trace(path);
  // Events: outer, inner, mark, legacy, open.
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t.name_of(0), "outer");
  EXPECT_EQ(t.ts[0], 100000);
  EXPECT_EQ(t.dur[0], 50000);
  EXPECT_EQ(t.category[0], Category::UserAnnotation);
  EXPECT_EQ(t.name_of(1), "inner");
  EXPECT_EQ(t.dur[1], 10000);
  EXPECT_EQ(t.name_of(2), "mark");
  EXPECT_EQ(t.phase[2], Phase::Instant);
  EXPECT_EQ(t.category[2], Category::Instant);
  EXPECT_EQ(t.dur[2], 0);
  EXPECT_EQ(t.name_of(3), "legacy");
  EXPECT_EQ(t.phase[3], Phase::Instant);
  EXPECT_EQ(t.name_of(4), "open");
  EXPECT_EQ(t.dur[4], 0);
  EXPECT_EQ(t.diagnostics.unmatched_begin_end, 2u);  // the stray E and the open B
  EXPECT_EQ(t.diagnostics.unknown_phase, 2u);        // 'b' and 'n'
  EXPECT_EQ(t.diagnostics.metadata_events, 2u);
  EXPECT_EQ(t.diagnostics.events_seen, 16u);
  EXPECT_EQ(t.strings.view(t.track_of(0).thread_name), "main");
  EXPECT_EQ(t.strings.view(t.track_of(0).process_name), "trainer");

  ASSERT_EQ(t.counters.size(), 2u);
  std::map<std::string, double> series;
  for (const auto& c : t.counters) {
    EXPECT_EQ(t.strings.view(c.name), "mem");
    EXPECT_EQ(c.ts, 180000);
    EXPECT_EQ(c.pid, 1);
    series[std::string(t.strings.view(c.series))] = c.value;
  }
  EXPECT_EQ(series, (std::map<std::string, double>{{"free", 2.0}, {"used", 5.5}}));

  ASSERT_EQ(t.memory_events.size(), 1u);
  const auto& m = t.memory_events[0];
  EXPECT_EQ(m.ts, 190000);
  EXPECT_EQ(m.bytes, 4096);
  EXPECT_EQ(m.total_allocated, 8192);
  EXPECT_EQ(m.total_reserved, 16384);
  EXPECT_EQ(m.device_type, 1);
  EXPECT_EQ(m.device_id, 0);
  EXPECT_EQ(m.track, t.track[0]);

  ASSERT_EQ(t.flows.size(), 2u);
  EXPECT_EQ(t.flows[0].phase, 's');
  EXPECT_EQ(t.flows[0].id, 7);
  EXPECT_EQ(t.flows[1].phase, 'f');
  EXPECT_EQ(t.strings.view(t.flows[1].category), "fwdbwd");

  // B/E spans nest like X spans.
  const ttap::EventTree tree = ttap::EventTree::build(t);
  EXPECT_EQ(tree.parent(1), 0u);
  EXPECT_FALSE(tree.in_tree(2));  // instants stay out of the tree
}

TEST(LoadInline, BareArrayIsTheEventList) {
  // Chrome's other trace form: the top level is the event array itself.
  const ttap::Trace t = ttap::load_trace(write_file("bare.json", R"([
    {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":2,"ts":100,"dur":5},
    {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"main"}}])"));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.name_of(0), "a");
  EXPECT_EQ(t.dur[0], 5000);
  EXPECT_EQ(t.strings.view(t.track_of(0).thread_name), "main");
}

TEST(LoadInline, GzipAndPlainGiveTheSameTrace) {
  // The same JSON, gunzipped to a plain file by the system's gzip.
  const std::string gz = data_path("hta_alexnet_a100_small.json.gz");
  const std::string plain = ttap::suite::scratch() + "/alexnet.json";
  ASSERT_EQ(std::system(("gzip -dc '" + gz + "' > '" + plain + "'").c_str()), 0);
  const ttap::Trace a = ttap::load_trace(gz);
  const ttap::Trace b = ttap::load_trace(plain);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.json_bytes, b.json_bytes);
  EXPECT_EQ(b.json_bytes, b.input_bytes);
  EXPECT_LT(a.input_bytes, a.json_bytes);  // compressed size for .gz
  for (EventId e = 0; e < a.size(); ++e) {
    ASSERT_EQ(a.name_of(e), b.name_of(e));
    ASSERT_EQ(a.ts[e], b.ts[e]);
    ASSERT_EQ(a.dur[e], b.dur[e]);
  }
}

// A stream (here a FIFO: not a regular file, so no size is known in advance) larger than
// the first 1 MiB read buffer must arrive whole. The buffer used to grow without keeping
// what had been read, so every stream over 1 MiB failed as "not JSON (at byte 0)".
TEST(LoadInline, StreamLargerThanTheFirstReadBuffer) {
  const std::string gz = data_path("tracelens_vit_nsfw_h100.json.gz");  // 2309646 bytes of JSON
  const std::string fifo = ttap::suite::scratch() + "/vit.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The writer blocks until the loader opens the FIFO; `timeout` ends it if that never happens.
  ASSERT_EQ(std::system(("timeout 30 sh -c \"gzip -dc '" + gz + "' > '" + fifo + "'\" &").c_str()), 0);
  const ttap::Trace streamed = ttap::load_trace(fifo);
  const ttap::Trace file = ttap::load_trace(gz);
  EXPECT_EQ(streamed.json_bytes, 2309646u);
  ASSERT_EQ(streamed.size(), file.size());
  for (EventId e = 0; e < file.size(); ++e) {
    ASSERT_EQ(streamed.name_of(e), file.name_of(e));
    ASSERT_EQ(streamed.ts[e], file.ts[e]);
  }
}

// ---- Bad input ---------------------------------------------------------------------------

class LoadBadInput : public ::testing::TestWithParam<ttap::suite::BadInput> {};

TEST_P(LoadBadInput, ThrowsInputErrorNamingFileAndOffset) {
  const auto& c = GetParam();
  const std::string path = write_file(c.name, c.content);
  try {
    ttap::load_trace(path);
    FAIL() << c.name << " loaded without an error";
  } catch (const ttap::InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.source(), path);
    EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;  // the message starts with the file
    EXPECT_NE(what.find(c.message), std::string::npos) << "expected \"" << c.message << "\" in: " << what;
    if (c.has_offset) {
      ASSERT_TRUE(e.offset().has_value()) << what;
      EXPECT_GE(*e.offset(), c.offset_from) << what;
      EXPECT_LE(*e.offset(), c.offset_to) << what;
      EXPECT_NE(what.find("(at byte " + std::to_string(*e.offset()) + ")"), std::string::npos) << what;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LoadBadInput, ::testing::ValuesIn(ttap::suite::bad_inputs()),
                         [](const ::testing::TestParamInfo<ttap::suite::BadInput>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(LoadBadInputFiles, MissingFileAndDirectory) {
  const std::string missing = ttap::suite::scratch() + "/does-not-exist.json";
  try {
    ttap::load_trace(missing);
    FAIL() << "a missing file loaded";
  } catch (const ttap::InputError& e) {
    EXPECT_EQ(std::string(e.what()), missing + ": cannot open: No such file or directory");
  }
  try {
    ttap::load_trace(ttap::suite::scratch());
    FAIL() << "a directory loaded";
  } catch (const ttap::InputError& e) {
    EXPECT_EQ(std::string(e.what()), ttap::suite::scratch() + ": not a regular file");
  }
}

// A gzip stream that inflates to 16 MiB (valid JSON: an empty event array padded with
// spaces) loads without a limit and is refused under TTAP_MAX_INPUT_BYTES=1 MiB, before
// it is inflated in full. The plain file is refused the same way.
TEST(LoadBadInputFiles, GzipBombStopsAtTheInputLimit) {
  const std::string plain = ttap::suite::scratch() + "/bomb.json";
  const std::string cmd = "{ printf '{\"traceEvents\":['; head -c 16777216 /dev/zero | tr '\\0' ' '; printf ']}'; } > '" + plain +
                          "' && gzip -1 -k -f '" + plain + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string gz = plain + ".gz";
  const ttap::Trace ok = ttap::load_trace(gz);
  EXPECT_EQ(ok.size(), 0u);
  EXPECT_EQ(ok.json_bytes, 16777216u + 18u);

  ::setenv("TTAP_MAX_INPUT_BYTES", "1048576", 1);
  for (const std::string& path : {gz, plain}) {
    try {
      ttap::load_trace(path);
      ADD_FAILURE() << path << ": 16 MiB passed a 1 MiB limit";
    } catch (const ttap::InputError& e) {
      EXPECT_EQ(e.source(), path);
      EXPECT_NE(std::string(e.what()).find("larger than the limit of 1048576 bytes"), std::string::npos) << e.what();
    }
  }
  ::unsetenv("TTAP_MAX_INPUT_BYTES");
}

// Found by the fuzzer: a 17-digit microsecond timestamp overflowed while being scaled;
// later the bound was halved so that differences of timestamps fit too.
TEST(BadInput, TimestampsJustPastTheLimitAreAbsurdNotOverflow) {
  for (const char* ts : {"17121954955221285", "4500000000000001", "99999999999999999999999", "-17121954955221285.5"}) {
    const std::string path = write_file("big_ts.json", std::string(R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":)") +
                                                          ts + R"(,"dur":1}]})");
    try {
      ttap::load_trace(path);
      ADD_FAILURE() << ts << " loaded";
    } catch (const ttap::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("absurd"), std::string::npos) << e.what();
    }
  }
  // The largest accepted value (4.5e15 us, the year 2112 since the epoch) loads exactly.
  const ttap::Trace t = ttap::load_trace(write_file("max_ts.json", R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":4499999999999999.999,"dur":1}]})"));
  EXPECT_EQ(t.ts[0], 4499999999999999999LL);
}

// Found by the fuzzer (scripts/fuzz/crashes/repro-*): values whose sums or differences
// would overflow int64 are refused as absurd instead of wrapping.
TEST(BadInput, OverflowingSumsAreAbsurd) {
  std::string many = R"({"traceEvents":[)";
  for (int i = 0; i < 4000; ++i)  // 4000 x 30 days > 146 years
    many += std::string(i ? "," : "") + R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":)" + std::to_string(i) +
            R"(,"ts":0,"dur":2592000000000})";
  many += "]}";
  const struct {
    const char* name;
    std::string json;
    const char* message;
  } cases[] = {
      {"sum.json", many, "146 years"},
      {"begin_end.json", R"([{"ph":"B","name":"a","pid":1,"tid":1,"ts":-4499999999999999},{"ph":"E","pid":1,"tid":1,"ts":4499999999999999}])", "absurd duration"},
      {"bytes.json", R"({"traceEvents":[{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Bytes":9000000000000000000,"Device Type":1}}]})", "absurd"},
      {"pid.json", R"({"traceEvents":[{"ph":"X","name":"a","pid":4611686018427387909,"tid":1,"ts":1,"dur":1}]})", "absurd"},
  };
  for (const auto& c : cases) {
    try {
      ttap::load_trace(write_file(c.name, c.json));
      ADD_FAILURE() << c.name << " loaded";
    } catch (const ttap::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.name << ": " << e.what();
    }
  }
  // A GPU span from -4.5e15 to +4.5e15 us is the widest there can be; its total fits.
  const ttap::Trace wide = ttap::load_trace(write_file("wide.json",
      R"([{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":-4499999999999999,"dur":1},{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":4499999999999999,"dur":1}])"));
  const ttap::EventTree tree = ttap::EventTree::build(wide);
  const auto tl = ttap::gpu_timeline(wide, tree);
  ASSERT_EQ(tl.size(), 1u);
  EXPECT_EQ(tl[0].total, 8999999999999999000LL);  // (4499999999999999000 + 1000) - (-4499999999999999000)
}

// ---- Chunked parsing: worker threads and the whole-document fallback ----------------------

// The chunked parser, forced to cut small traces into many 4 KB chunks parsed by three
// threads, gives exactly what one whole-document pass gives, tracks included.
TEST(Loader, ChunkedParseEqualsWholeDocumentParse) {
  for (const char* name : {"kineto_resnet50_v100_nw0.json.gz", "tracelens_qwen05b_h100.json.gz", "hta_mi250_toy.json.gz",
                           "hta_alexnet_a100_small.json.gz"}) {
    auto render = [&] {
      const ttap::Trace t = ttap::load_trace(data_path(name));
      const ttap::EventTree tree = ttap::EventTree::build(t);
      std::string out = std::to_string(t.size()) + "/" + std::to_string(t.flows.size()) + "/" +
                        std::to_string(t.memory_events.size()) + "\n";
      // Tracks by their labels: parts merged from worker threads must not split or mix them.
      for (const auto& tr : t.tracks)
        out += std::string(t.strings.view(tr.pid_label)) + "|" + std::string(t.strings.view(tr.tid_label)) + "|" +
               std::to_string(tr.stream) + "|" + std::string(t.strings.view(tr.thread_name)) + "\n";
      for (const auto& table : ttap::summary_tables(t, tree, {0})) out += ttap::render_csv(table);
      return out;
    };
    ::setenv("TTAP_PARSE_CHUNK_BYTES", "4096", 1);
    ::setenv("TTAP_THREADS", "3", 1);
    const std::string chunked = render();
    ::unsetenv("TTAP_PARSE_CHUNK_BYTES");
    ::unsetenv("TTAP_THREADS");
    ::setenv("TTAP_PARSE_WHOLE", "1", 1);
    const std::string whole = render();
    ::unsetenv("TTAP_PARSE_WHOLE");
    EXPECT_EQ(chunked, whole) << name;
    EXPECT_GT(chunked.size(), 1000u);
  }
}

// A string that looks like an event boundary does not fool the chunker.
TEST(Loader, BoundaryLookalikeInsideStringsIsHarmless) {
  std::string json = R"({"traceEvents":[)";
  for (int i = 0; i < 200; ++i) {
    if (i) json += ",";
    json += R"({"ph":"X","cat":"cpu_op","name":"op}, {\"ph\": \"X\"} )" + std::to_string(i) +
            R"(","pid":1,"tid":1,"ts":)" + std::to_string(i * 10) + R"(,"dur":5,"args":{"Input Dims":[[1,2]]}})";
  }
  json += "]}";
  const std::string path = write_file("lookalike.json", json);
  ::setenv("TTAP_PARSE_CHUNK_BYTES", "1024", 1);
  const ttap::Trace t = ttap::load_trace(path);
  ::unsetenv("TTAP_PARSE_CHUNK_BYTES");
  ASSERT_EQ(t.size(), 200u);
  EXPECT_EQ(t.name_of(199), R"(op}, {"ph": "X"} 199)");
}

// Arrays of objects inside args look like event boundaries to the chunker ("}, {" at
// depth 3); the chunk parse fails and the whole document is parsed instead, correctly.
TEST(Loader, NestedArraysOfObjectsInArgs) {
  std::string json = R"({"traceEvents":[)";
  for (int i = 0; i < 100; ++i) {
    if (i) json += ",";
    json += R"({"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":)" + std::to_string(i * 10) +
            R"(,"dur":5,"args":{"frames":[{"f":"a.py"}, {"f":"b.py"}, {"f":"c.py"}],"External id":)" + std::to_string(i) + "}}";
  }
  json += "]}";
  const std::string path = write_file("nested.json", json);
  ::setenv("TTAP_PARSE_CHUNK_BYTES", "1024", 1);
  const ttap::Trace t = ttap::load_trace(path);
  ::unsetenv("TTAP_PARSE_CHUNK_BYTES");
  ASSERT_EQ(t.size(), 100u);
  EXPECT_EQ(t.external_id[99], 99);
  EXPECT_EQ(t.ts[99], 990000);
}

// Found by the chunked-vs-whole differential fuzzer: an escaped top-level key is still
// "traceEvents". A second traceEvents array (escaped or not) is refused in both paths:
// which of the two is the trace cannot be told (Python's json keeps the last one).
TEST(Loader, EscapedKeysAndRepeatedTraceEvents) {
  const std::string first = R"({"ph": "X", "name": "a\"b", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "cat": "cpu\u005fop"})";
  const std::string second =
      R"({"ph": "X", "cat": "cpu_op", "name": "caf\u00e9", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {"Input \u0044ims": [[1, 2]]}})";
  const std::string path = write_file("escaped.json", R"({"trace\u0045vents": [)" + first + ", " + second + "]}");
  const ttap::Trace t = ttap::load_trace(path);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.name_of(0), "a\"b");
  EXPECT_EQ(t.category[0], ttap::Category::CpuOp);
  EXPECT_EQ(t.name_of(1), "caf\xc3\xa9");
  ASSERT_NE(t.op(1), nullptr);
  EXPECT_EQ(t.strings.view(t.op(1)->input_dims), "[[1,2]]");

  const std::string twice = write_file("escaped_twice.json", R"({"trace\u0045vents": [)" + first + R"(], "traceEvents": [)" + second + "]}");
  for (const bool whole : {false, true}) {
    if (whole) ::setenv("TTAP_PARSE_WHOLE", "1", 1);
    try {
      ttap::load_trace(twice);
      ADD_FAILURE() << "two traceEvents arrays loaded (whole=" << whole << ")";
    } catch (const ttap::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("\"traceEvents\" appears twice"), std::string::npos) << e.what();
    }
    ::unsetenv("TTAP_PARSE_WHOLE");
  }
}

// Found by the fuzzer: a process_name for a negative pid, parsed by a worker thread, read
// out of bounds when the parts were merged (negative pids looked like text pids).
TEST(Loader, NegativePidsAcrossWorkerParts) {
  std::string json = R"({"traceEvents":[)";
  const std::string pad(1100, 'p');
  for (int i = 0; i < 8; ++i) {
    if (i == 4) json += R"({"ph":"M","name":"process_name","pid":-2,"tid":0,"args":{"name":"worker"}},)";
    json += R"({"ph":"X","cat":"cpu_op","name":"a","pid":-2,"tid":1,"ts":)" + std::to_string(i * 10) +
            R"(,"dur":1,"args":{"pad":")" + pad + R"("}})" + (i < 7 ? "," : "");
  }
  json += R"(,{"ph":"C","name":"mem","pid":"Spans","ts":5,"args":{"v":1}}]})";
  const std::string path = write_file("negative_pid.json", json);
  ::setenv("TTAP_PARSE_CHUNK_BYTES", "1024", 1);
  ::setenv("TTAP_THREADS", "2", 1);
  const ttap::Trace chunked = ttap::load_trace(path);
  ::unsetenv("TTAP_PARSE_CHUNK_BYTES");
  ::unsetenv("TTAP_THREADS");
  ::setenv("TTAP_PARSE_WHOLE", "1", 1);
  const ttap::Trace whole = ttap::load_trace(path);
  ::unsetenv("TTAP_PARSE_WHOLE");
  ASSERT_EQ(chunked.size(), 8u);
  EXPECT_EQ(chunked.strings.view(chunked.tracks[chunked.track[0]].process_name), "worker");
  ASSERT_EQ(chunked.counters.size(), 1u);
  ASSERT_EQ(whole.counters.size(), 1u);
  // A text pid is stored as 2^62 + the id of its text in the trace's own string pool.
  for (const ttap::Trace* t : {&chunked, &whole}) {
    const int64_t pid = t->counters[0].pid;
    ASSERT_GE(pid, int64_t{1} << 62);
    EXPECT_EQ(t->strings.view(static_cast<ttap::StringId>(pid - (int64_t{1} << 62))), "Spans");
  }
}

}  // namespace
