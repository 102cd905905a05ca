// The loader on real traces of every schema variant, and on small inline traces for the
// cases that need exact expectations. Expected counts were read off the JSON with Python
// (json.load, then counting by "cat"/"ph"), independently of ttap.
#include <gtest/gtest.h>

#include <cstdlib>

#include "test_util.hpp"
#include "ttap/load.hpp"
#include "ttap/summary_report.hpp"

namespace {

using ttap::Category;
using ttap::test::data;
using ttap::test::temp_file;

size_t count(const ttap::Trace& t, Category c) {
  size_t n = 0;
  for (size_t e = 0; e < t.size(); ++e) n += t.category[e] == c;
  return n;
}

TEST(Loader, Schema2021CapitalizedCategories) {
  const ttap::Trace t = ttap::load_trace(data("kineto_resnet50_v100_nw0.json.gz"));
  // Python: Counter(e['cat'] for e in traceEvents): Operator 23646, Runtime 11923,
  // Kernel 8772, Memcpy 12, Memset 312; [memory] instants 12838; flows s 9096 + f 9096.
  EXPECT_EQ(count(t, Category::CpuOp), 23646u);
  EXPECT_EQ(count(t, Category::CudaRuntime), 11923u);
  EXPECT_EQ(count(t, Category::Kernel), 8772u);
  EXPECT_EQ(count(t, Category::GpuMemcpy), 12u);
  EXPECT_EQ(count(t, Category::GpuMemset), 312u);
  EXPECT_EQ(t.memory_events.size(), 12838u);
  EXPECT_EQ(t.flows.size(), 18192u);
  ASSERT_FALSE(t.devices.empty());
  EXPECT_EQ(t.devices[0].name, "Tesla V100-DGXS-32GB");
  EXPECT_EQ(t.devices[0].num_sms, 80);
  EXPECT_FALSE(t.distributed.present);
  // tid "25738" (text) on ops and 25738 (number) on [memory] are one thread.
  const ttap::Track& op_track = t.tracks[t.track[0]];
  EXPECT_EQ(op_track.tid, 25738);
  EXPECT_EQ(op_track.tid_label, ttap::kNoString);
  // GPU tracks are labelled "stream 7" and know their stream from args.
  bool saw_stream7 = false;
  for (const auto& tr : t.tracks) saw_stream7 |= tr.gpu && tr.stream == 7 && t.strings.view(tr.tid_label) == "stream 7";
  EXPECT_TRUE(saw_stream7);
}

TEST(Loader, CurrentSchemaWithPythonFunctions) {
  const ttap::Trace t = ttap::load_trace(data("tracelens_qwen05b_h100.json.gz"));
  // Python: cat counts cpu_op 4186, python_function 4262, kernel 1465, cuda_runtime 1921.
  EXPECT_EQ(count(t, Category::CpuOp), 4186u);
  EXPECT_EQ(count(t, Category::PythonFunction), 4262u);
  EXPECT_EQ(count(t, Category::Kernel), 1465u);
  EXPECT_EQ(count(t, Category::CudaRuntime), 1921u);
  EXPECT_EQ(t.python_args.size(), 4262u);
  size_t with_parent = 0;
  for (const auto& p : t.python_args) with_parent += p.parent_id != ttap::kNoId;
  EXPECT_GT(with_parent, 4000u);  // all but the roots ("Python parent id": null)
  EXPECT_EQ(t.base_time_ns, 1751410836000000000LL);
  // Input Dims of the first aten::embedding, stored compactly.
  for (size_t e = 0; e < t.size(); ++e) {
    if (t.name_of(static_cast<ttap::EventId>(e)) == "aten::embedding") {
      const ttap::OpArgs* a = t.op(static_cast<ttap::EventId>(e));
      ASSERT_NE(a, nullptr);
      EXPECT_EQ(t.strings.view(a->input_dims), "[[151936,1024],[16,559],[],[],[]]");
      break;
    }
  }
}

TEST(Loader, RocmStringIntegersAndHipNames) {
  const ttap::Trace t = ttap::load_trace(data("hta_mi250_toy.json.gz"));
  EXPECT_EQ(count(t, Category::Kernel), 14u);
  bool hip = false;
  for (size_t e = 0; e < t.size(); ++e) hip |= t.name_of(static_cast<ttap::EventId>(e)).substr(0, 3) == "hip";
  EXPECT_TRUE(hip);
}

TEST(Loader, CpuOnlyTrace) {
  const ttap::Trace t = ttap::load_trace(data("hta_cpu_only.json.gz"));
  EXPECT_EQ(count(t, Category::Kernel), 0u);
  EXPECT_EQ(count(t, Category::CpuOp), 4u);
  EXPECT_EQ(count(t, Category::UserAnnotation), 11u);
}

TEST(Loader, FloatNanosecondTimestampsAreExact) {
  const std::string path = temp_file("ns.json", R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1712195495406752.8,"dur":0.001},
    {"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":1428625731896.1795,"dur":47151.3954}]})");
  const ttap::Trace t = ttap::load_trace(path);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.ts[0], 1712195495406752800LL);
  EXPECT_EQ(t.dur[0], 1);
  EXPECT_EQ(t.ts[1], 1428625731896180LL);  // 0.1795 us rounds to 180 ns
  EXPECT_EQ(t.dur[1], 47151395LL);
}

TEST(Loader, BeginEndInstantsCountersAndBareArray) {
  const std::string path = temp_file("be.json", R"([
    {"ph":"B","name":"outer","pid":1,"tid":2,"ts":100},
    {"ph":"B","name":"inner","pid":1,"tid":2,"ts":110},
    {"ph":"E","pid":1,"tid":2,"ts":120},
    {"ph":"E","pid":1,"tid":2,"ts":150},
    {"ph":"i","name":"mark","pid":1,"tid":2,"ts":130,"s":"t"},
    {"ph":"C","name":"mem","pid":1,"ts":140,"args":{"used":5.5,"free":2}},
    {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"main"}}])");
  const ttap::Trace t = ttap::load_trace(path);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t.name_of(0), "outer");
  EXPECT_EQ(t.dur[0], 50000);
  EXPECT_EQ(t.dur[1], 10000);
  EXPECT_EQ(t.phase[2], ttap::Phase::Instant);
  ASSERT_EQ(t.counters.size(), 2u);
  EXPECT_DOUBLE_EQ(t.counters[0].value, 5.5);
  EXPECT_EQ(t.strings.view(t.tracks[t.track[0]].thread_name), "main");
}

// The chunked parser, forced to cut small traces into many 4 KB chunks parsed by three
// threads, gives exactly what one whole-document pass gives, tracks included.
TEST(Loader, ChunkedParseEqualsWholeDocumentParse) {
  for (const char* name : {"kineto_resnet50_v100_nw0.json.gz", "tracelens_qwen05b_h100.json.gz", "hta_mi250_toy.json.gz",
                           "hta_alexnet_a100_small.json.gz"}) {
    auto render = [&] {
      const ttap::Trace t = ttap::load_trace(data(name));
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
  const std::string path = temp_file("lookalike.json", json);
  ::setenv("TTAP_PARSE_CHUNK_BYTES", "1024", 1);
  const ttap::Trace t = ttap::load_trace(path);
  ::unsetenv("TTAP_PARSE_CHUNK_BYTES");
  ASSERT_EQ(t.size(), 200u);
  EXPECT_EQ(t.name_of(199), R"(op}, {"ph": "X"} 199)");
}

}  // namespace

namespace {

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
  const std::string path = ttap::test::temp_file("nested.json", json);
  ::setenv("TTAP_PARSE_CHUNK_BYTES", "1024", 1);
  const ttap::Trace t = ttap::load_trace(path);
  ::unsetenv("TTAP_PARSE_CHUNK_BYTES");
  ASSERT_EQ(t.size(), 100u);
  EXPECT_EQ(t.external_id[99], 99);
  EXPECT_EQ(t.ts[99], 990000);
}

}  // namespace

namespace {

// Found by the chunked-vs-whole differential fuzzer: an escaped top-level key is still
// "traceEvents", and two traceEvents arrays both count.
TEST(Loader, EscapedKeysAndRepeatedTraceEvents) {
  const std::string path = ttap::test::temp_file("escaped.json",
      R"({"trace\u0045vents": [{"ph": "X", "name": "a\"b", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "cat": "cpu\u005fop"}],)"
      R"( "traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "caf\u00e9", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {"Input \u0044ims": [[1, 2]]}}]})");
  const ttap::Trace t = ttap::load_trace(path);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.name_of(0), "a\"b");
  EXPECT_EQ(t.category[0], ttap::Category::CpuOp);
  EXPECT_EQ(t.name_of(1), "caf\xc3\xa9");
  ASSERT_NE(t.op(1), nullptr);
  EXPECT_EQ(t.strings.view(t.op(1)->input_dims), "[[1,2]]");
}

}  // namespace

namespace {

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
  const std::string path = ttap::test::temp_file("negative_pid.json", json);
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
