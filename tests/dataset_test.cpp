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

#include "dataset_support.hpp"
#include "suite_support.hpp"
#include "ttap/catalog.hpp"
#include "ttap/input.hpp"
#include "ttap/load.hpp"
#include "ttap/windows.hpp"

namespace fs = std::filesystem;
using namespace ttap;
using namespace ttap::dataset_support;

namespace {

const fs::path kRoot = fs::path(TTAP_TEST_DATA_DIR).parent_path().parent_path();
const fs::path kCorpus = kRoot / "data" / "ttap-bench";
const std::set<std::string> kUnseenTasks = {"pose", "depth", "video"};
const std::set<std::string> kTasks = {"classification", "detection", "segmentation", "generation",
                                      "pose",           "depth",     "video",        "other"};

const std::vector<Line>& manifest() {
  static const std::vector<Line> lines = read_manifest_lines(kCorpus);
  return lines;
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
  const Range rg = inject_one(kRoot / "scripts" / "dataset" / "surgery.py", source, out, "host_sync", "11");
  if (HasFailure()) return;

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
