// The second labeled set (data/ttap-bench-x, injector 2: scripts/dataset/inject2.py over
// every real GPU trace of ../shared, split by background): every line against its trace,
// ranges inside the steady state, splits disjoint by background and from data/ttap-bench's
// sources, and the injector end to end on a real trace.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dataset_support.hpp"
#include "suite_support.hpp"
#include "ttap/load.hpp"
#include "ttap/tree.hpp"
#include "ttap/windows.hpp"

namespace fs = std::filesystem;
using namespace ttap;
using namespace ttap::dataset_support;

namespace {

const fs::path kRoot = fs::path(TTAP_TEST_DATA_DIR).parent_path().parent_path();
const fs::path kSetX = kRoot / "data" / "ttap-bench-x";
const fs::path kBench = kRoot / "data" / "ttap-bench";

const std::vector<Line>& manifest_x() {
  static const std::vector<Line> lines = read_manifest_lines(kSetX);
  return lines;
}

TEST(DatasetX, EveryLineIsWellFormed) {
  const auto& lines = manifest_x();
  ASSERT_GE(lines.size(), 100u);
  std::set<std::string> traces;
  for (const Line& line : lines) {
    SCOPED_TRACE(line.trace);
    EXPECT_TRUE(traces.insert(line.trace).second) << "trace listed twice";
    EXPECT_TRUE(line.label == "good" || line.label == "bad") << line.label;
    EXPECT_EQ(line.label == "bad", !line.ranges.empty()) << "label must be bad iff ranges are present";
    EXPECT_TRUE(line.split == "train" || line.split == "val" || line.split == "test") << line.split;
    EXPECT_FALSE(line.background.empty()) << "every line names the real trace it was made from";
  }
}

// Each range lies inside the steady state ttap cuts into windows (not just overlapping it):
// a label outside it marks time no window holds.
TEST(DatasetX, EveryTraceLoadsAndHoldsItsRangesInsideTheSteadyState) {
  for (const Line& line : manifest_x()) {
    const fs::path path = kSetX / line.trace;
    // Two backgrounds record kernels overlapping by up to ~2 us on one stream
    // (tracelens_vllm_b200_eager, hta_torchrec_a100_rank0): 3 us of slack.
    check_trace_against_line(path, line, 3000);
    if (!fs::exists(path)) continue;
    SCOPED_TRACE(line.trace);
    const Trace trace = load_trace(path.string());
    const SteadyState steady = steady_state(trace, EventTree::build(trace));
    for (const Range& r : line.ranges) {
      // 1 us of slack: the manifest rounds to the nanosecond, the store to whole ns.
      EXPECT_GE(std::llround(r.ts_begin * 1000.0), steady.begin - 1000) << r.type << " begins before the steady state";
      EXPECT_LE(std::llround(r.ts_end * 1000.0), steady.end + 1000) << r.type << " ends after the steady state";
    }
  }
}

// Leave-background-out: a real trace feeds one split only; the backgrounds of val and test
// are none of data/ttap-bench's surgery sources (which that corpus spreads over all its
// splits, train included), so no crop of them is trained on by either corpus.
TEST(DatasetX, SplitsAreDisjointByBackground) {
  std::map<std::string, std::set<std::string>> splits_of;
  std::map<std::string, std::set<std::string>> backgrounds_in;
  for (const Line& line : manifest_x()) {
    splits_of[line.background].insert(line.split);
    backgrounds_in[line.split].insert(line.background);
  }
  for (const auto& [background, splits] : splits_of) {
    EXPECT_EQ(splits.size(), 1u) << background << " feeds more than one split";
  }
  std::set<std::string> bench_sources;
  for (const Line& line : read_manifest_lines(kBench)) {
    if (!line.surgery_source.empty()) bench_sources.insert(line.surgery_source);
  }
  ASSERT_FALSE(bench_sources.empty());
  for (const char* held_out : {"val", "test"}) {
    ASSERT_FALSE(backgrounds_in[held_out].empty()) << held_out << " has no background";
    for (const std::string& b : backgrounds_in[held_out]) {
      EXPECT_EQ(bench_sources.count(b), 0u) << b << " is in " << held_out << " here and a source of data/ttap-bench";
      EXPECT_EQ(backgrounds_in["train"].count(b), 0u) << b;
    }
  }
  for (const std::string& b : backgrounds_in["val"]) EXPECT_EQ(backgrounds_in["test"].count(b), 0u) << b;
  // Every real GPU trace of ../shared is used: 23 (param_dlrm as its rank 0).
  EXPECT_EQ(splits_of.size(), 23u);
}

TEST(DatasetX, CoversSplitsLabelsIdsAndHardware) {
  std::map<std::string, std::set<std::string>> labels_by_split, hardware_by_split;
  std::set<std::string> ids;
  for (const Line& line : manifest_x()) {
    labels_by_split[line.split].insert(line.label);
    hardware_by_split[line.split].insert(line.hardware);
    for (const Range& r : line.ranges) ids.insert(r.type);
  }
  for (const char* split : {"train", "val", "test"}) {
    EXPECT_EQ(labels_by_split[split].size(), 2u) << split << " needs good and bad traces";
  }
  EXPECT_GE(ids.size(), 12u);
  EXPECT_GE(hardware_by_split["test"].size(), 3u) << "the test split should span several GPUs";
}

// inject2.py on a real H100 trace (tests/data): a host_sync goes in at the Python-frame and
// runtime-call level; the trace stays consistent, and the labeled range holds a
// synchronizing runtime call with no kernel running after it inside the range.
TEST(DatasetX, Inject2HostSyncIntoARealTraceStaysConsistent) {
  const std::string source = suite::data_path("tracelens_vit_nsfw_h100.json.gz");
  const std::string out = suite::scratch() + "/inject2_vit.json.gz";
  const Range rg = inject_one(kRoot / "scripts" / "dataset" / "inject2.py", source, out, "host_sync", "7");
  if (HasFailure()) return;

  const Trace after = load_trace(out);
  const int64_t b = std::llround(rg.ts_begin * 1000.0), f = std::llround(rg.ts_end * 1000.0);
  int64_t sync_end = -1;
  bool py_frame_inside = false;
  for (EventId e = 0; e < after.size(); ++e) {
    const std::string_view name = after.name_of(e);
    if (name.find("Synchronize") != std::string_view::npos && after.ts[e] >= b && after.end(e) <= f) {
      sync_end = std::max(sync_end, after.end(e));
    }
    if (after.category[e] == Category::PythonFunction && after.ts[e] == b) py_frame_inside = true;
  }
  ASSERT_GE(sync_end, 0) << "no synchronizing runtime call inside the labeled range";
  EXPECT_TRUE(py_frame_inside) << "the range starts at the inserted Python frame";
  for (EventId e = 0; e < after.size(); ++e) {
    if (after.category[e] == Category::Kernel) {
      EXPECT_FALSE(after.ts[e] > sync_end && after.end(e) < f) << after.name_of(e) << " runs in the idle after the sync";
    }
  }
}

TEST(DatasetX, Inject2RefusesACpuOnlyTrace) {
  const suite::ProcResult r = suite::run_process(
      {"/usr/bin/python3", (kRoot / "scripts" / "dataset" / "inject2.py").string(),
       suite::data_path("hta_cpu_only.json.gz"), suite::scratch() + "/never2.json.gz", "--inject", "host_sync"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("GPU"), std::string::npos) << r.err;
}

}  // namespace
