// The ttap-bench corpus (data/ttap-bench, docs/DATASET.md): every manifest line is checked
// against its trace, and the zoo's label pipeline is run end to end on a tiny CPU job.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "suite_support.hpp"
#include "ttap/catalog.hpp"
#include "ttap/input.hpp"
#include "ttap/load.hpp"
#include "ttap/windows.hpp"

namespace fs = std::filesystem;
using namespace ttap;

namespace {

const fs::path kRoot = fs::path(TTAP_TEST_DATA_DIR).parent_path().parent_path();
const fs::path kCorpus = kRoot / "data" / "ttap-bench";
const std::set<std::string> kUnseenTasks = {"pose", "depth", "video"};
const std::set<std::string> kTasks = {"classification", "detection", "segmentation", "generation",
                                      "pose",           "depth",     "video",        "other"};

struct Range {
  std::string type;
  double ts_begin = 0, ts_end = 0;
};

struct Line {
  std::string trace, label, task, split, mode, hardware;
  std::vector<Range> ranges;
  std::string surgery_source;  // surgery traces: the public trace they were made from
  int64_t surgery_steps = -1;  // surgery traces: steps cropped (0: the whole source)
};

// Parses one manifest line; records a test failure (and returns false) when a required
// field is missing or mistyped.
bool parse_line(simdjson::dom::parser& parser, const std::string& text, Line& out) {
  simdjson::dom::element doc;
  if (parser.parse(text).get(doc)) {
    ADD_FAILURE() << "not JSON: " << text.substr(0, 200);
    return false;
  }
  auto str = [&](const char* key, std::string& dst) {
    std::string_view v;
    if (doc[key].get(v)) {
      ADD_FAILURE() << "missing string field '" << key << "' in " << text.substr(0, 200);
      return false;
    }
    dst = v;
    return true;
  };
  if (!str("trace", out.trace) || !str("label", out.label) || !str("task", out.task) || !str("split", out.split) ||
      !str("mode", out.mode) || !str("hardware", out.hardware))
    return false;
  simdjson::dom::array ranges;
  if (doc["anti_patterns"].get(ranges)) {
    ADD_FAILURE() << out.trace << ": anti_patterns is not an array";
    return false;
  }
  for (simdjson::dom::element r : ranges) {
    Range rg;
    std::string_view type;
    if (r["type"].get(type) || r["ts_begin"].get(rg.ts_begin) || r["ts_end"].get(rg.ts_end)) {
      ADD_FAILURE() << out.trace << ": a range lacks type/ts_begin/ts_end";
      return false;
    }
    rg.type = type;
    out.ranges.push_back(rg);
  }
  simdjson::dom::object surgery;
  if (!doc["surgery"].get(surgery)) {
    std::string_view source;
    if (!surgery["source"].get(source)) out.surgery_source = source;
    if (surgery["steps"].get(out.surgery_steps)) out.surgery_steps = -1;
  }
  return true;
}

std::vector<Line> read_manifest() {
  std::vector<Line> lines;
  const fs::path manifest = kCorpus / "manifest.jsonl";
  if (!fs::exists(manifest)) {
    ADD_FAILURE() << manifest << " is missing (scripts/dataset/make_corpus.sh builds it)";
    return lines;
  }
  simdjson::dom::parser parser;
  for (const std::string& text : suite::split_lines(suite::read_file(manifest.string()))) {
    if (text.empty()) continue;
    Line line;
    if (parse_line(parser, text, line)) lines.push_back(std::move(line));
  }
  return lines;
}

const std::vector<Line>& manifest() {
  static const std::vector<Line> lines = read_manifest();
  return lines;
}

// [first ts, last end] over the trace's events, in ns.
std::pair<int64_t, int64_t> event_span(const Trace& t) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (EventId e = 0; e < t.size(); ++e) {
    lo = std::min(lo, t.ts[e]);
    hi = std::max(hi, t.end(e));
  }
  return {lo, hi};
}

// Surgery must leave a trace consistent: each GPU kernel/copy/memset starts no earlier than
// the runtime call that launched it (same correlation id), and GPU activity on one stream
// does not overlap. Returns the number of violations, each reported.
int gpu_consistency_violations(const Trace& t) {
  std::map<int64_t, int64_t> launch_ts;
  for (EventId e = 0; e < t.size(); ++e) {
    if (is_launch(t.category[e]) && t.correlation[e] != kNoId) launch_ts[t.correlation[e]] = t.ts[e];
  }
  int bad = 0;
  std::map<TrackId, std::vector<std::pair<int64_t, int64_t>>> by_track;
  for (EventId e = 0; e < t.size(); ++e) {
    if (!is_gpu_activity(t.category[e])) continue;
    by_track[t.track[e]].push_back({t.ts[e], t.end(e)});
    const auto it = t.correlation[e] == kNoId ? launch_ts.end() : launch_ts.find(t.correlation[e]);
    if (it != launch_ts.end() && it->second > t.ts[e]) {
      ADD_FAILURE() << t.name_of(e) << " starts at " << t.ts[e] << " ns, before its launch at " << it->second;
      ++bad;
    }
  }
  for (auto& [track, spans] : by_track) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      // 1 us of slack: the public sources round to the microsecond in places.
      if (spans[i].first < spans[i - 1].second - 1000) {
        ADD_FAILURE() << "GPU events overlap on one stream at " << spans[i].first << " ns";
        ++bad;
      }
    }
  }
  return bad;
}

// Checks one trace against its manifest line; used by the corpus suite and the end-to-end test.
void check_trace_against_line(const fs::path& trace_path, const Line& line) {
  SCOPED_TRACE(trace_path.string());
  ASSERT_TRUE(fs::exists(trace_path)) << "trace file missing";
  Trace trace;
  ASSERT_NO_THROW(trace = load_trace(trace_path.string()));
  ASSERT_GT(trace.size(), 0u);
  const auto [lo, hi] = event_span(trace);
  // Every range overlaps the steady state that ttap cuts into windows: a range outside it
  // labels something no window, and so no detector, ever looks at.
  const SteadyState steady = steady_state(trace, EventTree::build(trace));
  for (const Range& r : line.ranges) {
    EXPECT_TRUE(std::llround(r.ts_end * 1000.0) > steady.begin && std::llround(r.ts_begin * 1000.0) < steady.end)
        << r.type << " [" << r.ts_begin << ", " << r.ts_end << "] us lies outside the steady state (" << steady.source
        << ") [" << steady.begin / 1000.0 << ", " << steady.end / 1000.0 << "] us";
    EXPECT_TRUE(is_catalog_id(r.type)) << "not a catalog id: " << r.type;
    EXPECT_LE(r.ts_begin, r.ts_end) << r.type;
    // Manifest times are the trace's microseconds; the store keeps round(ts * 1000) ns.
    EXPECT_GE(std::llround(r.ts_begin * 1000.0), lo) << r.type << " begins before the trace's first event";
    EXPECT_LE(std::llround(r.ts_end * 1000.0), hi) << r.type << " ends after the trace's last event";
  }
  const std::string json = [&] {
    RawInput raw = read_input(trace_path.string(), default_max_input_bytes());
    return std::string(raw.json.data(), raw.json.size());
  }();
  EXPECT_EQ(json.find("ttap_label::"), std::string::npos) << "a label span was left in the trace";
  EXPECT_EQ(gpu_consistency_violations(trace), 0);
}

TEST(DatasetManifest, EveryLineIsWellFormed) {
  const auto& lines = manifest();
  ASSERT_FALSE(lines.empty());
  std::set<std::string> seen_traces;
  for (const Line& line : lines) {
    SCOPED_TRACE(line.trace);
    EXPECT_TRUE(seen_traces.insert(line.trace).second) << "trace listed twice";
    EXPECT_TRUE(line.label == "good" || line.label == "bad") << line.label;
    EXPECT_EQ(line.label == "bad", !line.ranges.empty()) << "label must be bad iff ranges are present";
    EXPECT_TRUE(line.split == "train" || line.split == "val" || line.split == "test") << line.split;
    EXPECT_TRUE(kTasks.count(line.task)) << line.task;
    EXPECT_TRUE(line.mode == "train" || line.mode == "inference") << line.mode;
    EXPECT_FALSE(line.hardware.empty());
    if (kUnseenTasks.count(line.task)) {
      EXPECT_EQ(line.split, "test") << "unseen task outside test";
    }
  }
}

TEST(DatasetManifest, EveryTraceLoadsAndHoldsItsRanges) {
  for (const Line& line : manifest()) check_trace_against_line(kCorpus / line.trace, line);
}

// A good surgery trace of a source without steps is the whole source, moved in time, so it
// holds exactly the source's events. (surgery.py once edited its cached copy of such a
// source in place: each trace carried the earlier traces' injections, unlabeled.)
TEST(DatasetManifest, GoodWholeSourceCropsHoldTheSourceUnchanged) {
  int checked = 0;
  std::map<std::string, size_t> source_events;  // each source is loaded once
  for (const Line& line : manifest()) {
    if (line.label != "good" || line.surgery_steps != 0) continue;
    const fs::path source = fs::path(TTAP_TEST_DATA_DIR) / line.surgery_source;
    if (!fs::exists(source)) continue;
    SCOPED_TRACE(line.trace);
    auto [it, fresh] = source_events.try_emplace(line.surgery_source, 0);
    if (fresh) it->second = load_trace(source.string()).size();
    EXPECT_EQ(load_trace((kCorpus / line.trace).string()).size(), it->second);
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no good whole-source surgery trace in the corpus to check";
}

TEST(DatasetManifest, CoversSplitsLabelsAndIds) {
  const auto& lines = manifest();
  std::map<std::string, std::set<std::string>> labels_by_split;
  std::set<std::string> ids, unseen_in_test;
  for (const Line& line : lines) {
    labels_by_split[line.split].insert(line.label);
    for (const Range& r : line.ranges) ids.insert(r.type);
    if (kUnseenTasks.count(line.task)) unseen_in_test.insert(line.task);
  }
  for (const char* split : {"train", "val", "test"}) {
    EXPECT_EQ(labels_by_split[split].size(), 2u) << split << " needs good and bad traces";
  }
  EXPECT_GE(ids.size(), 10u) << "at least 10 catalog ids should be represented";
  EXPECT_EQ(unseen_in_test.size(), kUnseenTasks.size()) << "pose, depth and video belong in test";
  EXPECT_GE(lines.size(), 100u);
}

// Runs the zoo for one tiny CPU job with a host_sync injected, moves the label out with
// label.py, and checks the manifest line and the trace.
TEST(DatasetZoo, TinyRunLabelsMoveFromTraceToManifest) {
  const suite::ProcResult deps =
      suite::run_process({"/usr/bin/python3", "-c", "import torch, torchvision, numpy"});
  ASSERT_EQ(deps.exit_code, 0) << "/usr/bin/python3 cannot import torch/torchvision/numpy; install "
                                  "python3-torch and python3-torchvision (scripts/install-deps.sh):\n"
                               << deps.err;
  const std::string dir = suite::scratch() + "/zoo";
  fs::create_directories(dir);
  const std::string prefix = dir + "/tiny";
  const std::string scripts = (kRoot / "scripts" / "dataset").string();
  const suite::ProcResult zoo = suite::run_process(
      {"/usr/bin/python3", scripts + "/zoo.py", "--workload", "resnet18", "--mode", "train", "--batch", "2", "--size",
       "32", "--active", "1", "--workers", "0", "--inject", "host_sync", "--out", prefix});
  ASSERT_EQ(zoo.exit_code, 0) << zoo.err;
  const std::string raw = suite::read_file(prefix + ".raw.json");
  ASSERT_NE(raw.find("ttap_label::host_sync"), std::string::npos) << "the zoo did not mark the injected region";

  const suite::ProcResult lab =
      suite::run_process({"/usr/bin/python3", scripts + "/label.py", prefix + ".raw.json", prefix + ".run.json",
                          dir + "/tiny.json.gz", "--trace-path", "tiny.json.gz", "--split", "train"});
  ASSERT_EQ(lab.exit_code, 0) << lab.err;
  simdjson::dom::parser parser;
  Line line;
  ASSERT_TRUE(parse_line(parser, lab.out, line));
  EXPECT_EQ(line.label, "bad");
  EXPECT_EQ(line.hardware, "CPU");
  ASSERT_EQ(line.ranges.size(), 1u) << "one profiled step, one host_sync region";
  EXPECT_EQ(line.ranges[0].type, "host_sync");
  EXPECT_LT(line.ranges[0].ts_begin, line.ranges[0].ts_end);
  check_trace_against_line(dir + "/tiny.json.gz", line);

  // The range covers the aten::item the injected code ran, and no label event survived.
  const Trace trace = load_trace(dir + "/tiny.json.gz");
  bool item_inside = false;
  for (EventId e = 0; e < trace.size(); ++e) {
    if (trace.name_of(e) != "aten::item") continue;
    item_inside |= trace.ts[e] >= std::llround(line.ranges[0].ts_begin * 1000.0) &&
                   trace.end(e) <= std::llround(line.ranges[0].ts_end * 1000.0);
  }
  EXPECT_TRUE(item_inside) << "no aten::item inside the labeled range";

  // A good run of the same job has no range and is labeled good.
  const suite::ProcResult good = suite::run_process(
      {"/usr/bin/python3", scripts + "/zoo.py", "--workload", "resnet18", "--mode", "inference", "--batch", "1",
       "--size", "32", "--active", "1", "--workers", "0", "--out", dir + "/good"});
  ASSERT_EQ(good.exit_code, 0) << good.err;
  const suite::ProcResult lab2 =
      suite::run_process({"/usr/bin/python3", scripts + "/label.py", dir + "/good.raw.json", dir + "/good.run.json",
                          dir + "/good.json.gz", "--trace-path", "good.json.gz", "--split", "val"});
  ASSERT_EQ(lab2.exit_code, 0) << lab2.err;
  Line good_line;
  ASSERT_TRUE(parse_line(parser, lab2.out, good_line));
  EXPECT_EQ(good_line.label, "good");
  EXPECT_TRUE(good_line.ranges.empty());
}

TEST(DatasetZoo, RejectsAPatternTheDeviceCannotShow) {
  const std::string scripts = (kRoot / "scripts" / "dataset").string();
  const suite::ProcResult r = suite::run_process({"/usr/bin/python3", scripts + "/zoo.py", "--workload", "resnet18",
                                                  "--inject", "pageable_memcpy", "--out",
                                                  suite::scratch() + "/never"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not injectable"), std::string::npos) << r.err;
}

}  // namespace

namespace {

// surgery.py on a real H100 trace: a host_sync goes in, the result stays consistent, keeps
// every kernel of the source, and the labeled range holds the inserted sync and the GPU
// idle after it.
TEST(DatasetSurgery, HostSyncInsertedIntoARealTraceStaysConsistent) {
  const std::string source = suite::data_path("tracelens_vit_nsfw_h100.json.gz");
  const std::string out = suite::scratch() + "/surgery_vit.json.gz";
  const suite::ProcResult r =
      suite::run_process({"/usr/bin/python3", (kRoot / "scripts" / "dataset" / "surgery.py").string(), source, out,
                          "--inject", "host_sync", "--seed", "11"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(r.out).get(doc)) << r.out;
  simdjson::dom::array ranges;
  ASSERT_FALSE(doc["anti_patterns"].get(ranges));
  ASSERT_EQ(ranges.size(), 1u);
  Line line;
  line.label = "bad";
  Range rg;
  rg.type = std::string(std::string_view(ranges.at(0)["type"]));
  rg.ts_begin = double(ranges.at(0)["ts_begin"]);
  rg.ts_end = double(ranges.at(0)["ts_end"]);
  line.ranges.push_back(rg);
  EXPECT_EQ(rg.type, "host_sync");
  check_trace_against_line(out, line);

  const Trace before = load_trace(source);
  const Trace after = load_trace(out);
  auto count = [](const Trace& t, Category c) {
    size_t n = 0;
    for (EventId e = 0; e < t.size(); ++e) n += t.category[e] == c;
    return n;
  };
  EXPECT_EQ(count(after, Category::Kernel), count(before, Category::Kernel)) << "the crop lost or gained kernels";
  const int64_t b = std::llround(rg.ts_begin * 1000.0), f = std::llround(rg.ts_end * 1000.0);
  bool sync_inside = false;
  for (EventId e = 0; e < after.size(); ++e) {
    if (after.name_of(e) == "cudaStreamSynchronize") sync_inside |= after.ts[e] >= b && after.end(e) <= f;
  }
  EXPECT_TRUE(sync_inside) << "the inserted cudaStreamSynchronize is not inside the labeled range";
  // No kernel runs inside the range after the sync returns: the GPU idles there.
  for (EventId e = 0; e < after.size(); ++e) {
    if (after.category[e] == Category::Kernel) {
      EXPECT_FALSE(after.ts[e] > b && after.end(e) < f) << after.name_of(e);
    }
  }
}

TEST(DatasetSurgery, RefusesACpuOnlyTrace) {
  const suite::ProcResult r = suite::run_process(
      {"/usr/bin/python3", (kRoot / "scripts" / "dataset" / "surgery.py").string(),
       suite::data_path("hta_cpu_only.json.gz"), suite::scratch() + "/never.json.gz", "--inject", "host_sync"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no GPU kernels"), std::string::npos) << r.err;
}

}  // namespace
