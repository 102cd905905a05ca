// Every public trace of ../shared/traces/public (25 files), one test per trace, run on the
// unmodified copies in tests/data so that a clone without ../shared runs them too;
// including the 8 ranks of the PARAM DLRM job, extracted from their tarball with `tar`
// into a scratch folder at test time. When ../shared is beside the checkout, one more test
// checks that tests/data holds exactly its traces, byte for byte.
//
// The figures per trace come from tests/tools/compute_expected.py (section "shared"),
// which reads each file with Python's json module: events = X, B and instant events other
// than [memory]; [memory] instants; flow events (s/t/f); GPU activity (kernel, memcpy,
// memset) and its total duration in ns (Decimal arithmetic, exact).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "suite_support.hpp"
#include "ttap/analyze.hpp"
#include "ttap/load.hpp"
#include "ttap/summary_report.hpp"

namespace fs = std::filesystem;

namespace {

struct SharedTrace {
  const char* file;  // a .json.gz in the folder, or a rank file inside the DLRM tarball
  size_t events;
  size_t memory_events;
  size_t flows;
  size_t gpu_events;
  int64_t gpu_ns;
};

void PrintTo(const SharedTrace& t, std::ostream* os) { *os << t.file; }

const SharedTrace kTraces[] = {
    {"hta_alexnet_a100_small.json.gz", 870, 0, 500, 98, 66203000},
    {"hta_cpu_only.json.gz", 18, 0, 0, 0, 0},
    {"hta_ddp_a100_nccl.json.gz", 26935, 0, 13600, 3774, 165185838},
    {"hta_ddp_cnn_v100_nsres.json.gz", 45422, 0, 23234, 6095, 472454441},
    {"hta_event_sync_small.json.gz", 35, 0, 21, 5, 51000},
    {"hta_mi250_toy.json.gz", 115, 0, 45, 16, 149042},
    {"hta_mtia_no_gpu_large.json.gz", 138377, 0, 7316, 0, 0},
    {"hta_no_distributed_info.json.gz", 2467, 0, 0, 0, 0},
    {"hta_sampled_rank0.json.gz", 4811, 0, 0, 1204, 607844000},
    {"hta_sampled_rank1.json.gz", 4676, 0, 0, 1154, 667530000},
    {"hta_torchrec_a100_rank0.json.gz", 67219, 0, 41671, 7747, 449763000},
    {"kineto_resnet50_v100_nw0.json.gz", 44668, 12838, 18192, 9096, 603558000},
    {"kineto_resnet50_v100_nw4.json.gz", 41908, 10980, 18516, 9258, 614413000},
    {"param_resnet_2080ti.json.gz", 75550, 0, 36041, 10113, 4733822000},
    {"tracelens_owlv2_mi300.json.gz", 103249, 14264, 13207, 4340, 331819224},
    {"tracelens_qwen05b_h100.json.gz", 12082, 2450, 3629, 1707, 45647300},
    {"tracelens_qwen05b_mi300.json.gz", 12114, 2692, 3224, 1517, 43062802},
    {"tracelens_resnet_ckpt_mi300.json.gz", 49210, 0, 7179, 3653, 100230072},
    {"tracelens_sglang_decode_bs32.json.gz", 59137, 1014, 1502, 2, 11015},
    {"tracelens_sglang_qwen3_8b_prefilldecode.json.gz", 58712, 0, 1603, 534, 492811563},
    {"tracelens_vit_nsfw_h100.json.gz", 3919, 620, 539, 156, 1225310},
    {"tracelens_vllm_b200_eager.json.gz", 22355, 0, 2301, 929, 11665760},
    {"tracelens_vllm_piecewise_capture.json.gz", 117801, 1114, 3284, 100, 843456},
    {"tracelens_vllm_piecewise_graph_execution.json.gz", 18485, 0, 804, 423, 156085905},
    {"tracelens_xdit_flux1_capture.json.gz", 181601, 0, 11594, 2555, 64139539},
    {"worker0_step_12.1694128201545.pt.trace.json", 2462, 0, 786, 261, 6851000},
    {"worker1_step_12.1694128201556.pt.trace.json", 2529, 0, 853, 326, 12601000},
    {"worker2_step_12.1694128201554.pt.trace.json", 2451, 0, 775, 262, 4579000},
    {"worker3_step_12.1694128201557.pt.trace.json", 2554, 0, 878, 337, 11042000},
    {"worker4_step_12.1694128201547.pt.trace.json", 2472, 0, 796, 273, 7739000},
    {"worker5_step_12.1694128201549.pt.trace.json", 2442, 0, 766, 261, 7311000},
    {"worker6_step_12.1694128201553.pt.trace.json", 2453, 0, 777, 262, 4628000},
    {"worker7_step_12.1694128201553.pt.trace.json", 2442, 0, 766, 262, 2825000},
};

const fs::path kShared = TTAP_SHARED_TRACES;
const fs::path kData = TTAP_TEST_DATA_DIR;
const char* kTarball = "param_dlrm_v100_8ranks.tar.gz";

bool is_rank_file(const std::string& name) { return name.rfind("worker", 0) == 0; }

// The DLRM ranks, extracted once per process.
const fs::path& dlrm_dir() {
  static const fs::path dir = [] {
    const fs::path out = fs::path(ttap::suite::scratch()) / "dlrm";
    fs::create_directories(out);
    const std::string cmd = "tar -xzf '" + (kData / kTarball).string() + "' -C '" + out.string() + "'";
    if (std::system(cmd.c_str()) != 0) ADD_FAILURE() << cmd << " failed";
    return out;
  }();
  return dir;
}

fs::path locate(const std::string& name) {
  if (!is_rank_file(name)) return kData / name;
  for (const auto& entry : fs::recursive_directory_iterator(dlrm_dir()))
    if (entry.path().filename() == name) return entry.path();
  return {};
}

class SharedTraces : public ::testing::TestWithParam<SharedTrace> {};

TEST_P(SharedTraces, LoadsWithTheRightCountsAndSummarizes) {
  const SharedTrace& x = GetParam();
  const fs::path path = locate(x.file);
  ASSERT_FALSE(path.empty()) << x.file << " not found in " << kTarball;
  const ttap::Trace t = ttap::load_trace(path.string());
  EXPECT_EQ(t.size(), x.events);
  EXPECT_EQ(t.memory_events.size(), x.memory_events);
  EXPECT_EQ(t.flows.size(), x.flows);
  const ttap::EventTree tree = ttap::EventTree::build(t);
  EXPECT_EQ(tree.gpu_events().size(), x.gpu_events);
  int64_t gpu_ns = 0;
  for (ttap::EventId g : tree.gpu_events()) gpu_ns += t.dur[g];
  EXPECT_EQ(gpu_ns, x.gpu_ns);
  // Every GPU event is on a GPU track; the timeline's parts add up.
  for (ttap::EventId g : tree.gpu_events()) ASSERT_TRUE(t.track_of(g).gpu);
  for (const auto& g : ttap::gpu_timeline(t, tree)) {
    EXPECT_EQ(g.busy + g.idle, g.total) << "device " << g.device;
    EXPECT_GE(g.idle, 0) << "device " << g.device;
    EXPECT_EQ(g.computation + g.exposed_communication + g.exposed_memcpy, g.busy) << "device " << g.device;
    EXPECT_LE(g.exposed_communication, g.communication);
    EXPECT_LE(g.exposed_memcpy, g.memcpy);
  }
  if (x.gpu_events == 0) {
    EXPECT_TRUE(ttap::gpu_timeline(t, tree).empty());
  }
  const auto tables = ttap::summary_tables(t, tree, {});
  ASSERT_FALSE(tables.empty());
  EXPECT_EQ(tables.front().id, "overview");
  EXPECT_EQ(tables.back().id, "diagnostics");
}

INSTANTIATE_TEST_SUITE_P(Public, SharedTraces, ::testing::ValuesIn(kTraces),
                         [](const ::testing::TestParamInfo<SharedTrace>& info) {
                           std::string n = info.param.file;
                           n = n.substr(0, n.find('.'));
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// The .json.gz files directly in `dir`, and the tarball's rank files.
std::set<std::string> traces_in(const fs::path& dir) {
  std::set<std::string> present;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 8 && name.compare(name.size() - 8, 8, ".json.gz") == 0) present.insert(name);
  }
  return present;
}

// Nothing in tests/data is left out: a trace added there must be added to kTraces too.
TEST(SharedTracesFolder, EveryTraceIsCovered) {
  std::set<std::string> listed;
  for (const auto& x : kTraces) listed.insert(x.file);
  std::set<std::string> present = traces_in(kData);
  ASSERT_TRUE(fs::exists(kData / kTarball));
  for (const auto& entry : fs::recursive_directory_iterator(dlrm_dir()))
    if (entry.path().extension() == ".json") present.insert(entry.path().filename().string());
  EXPECT_EQ(present, listed);
  EXPECT_EQ(present.size(), 25u + 8u);
}

// tests/data holds ../shared/traces/public's traces and nothing else, unmodified: a trace
// added to ../shared must be copied here too (with its line in tests/data/SOURCES.md).
TEST(SharedTracesFolder, TestDataCopiesAreTheSharedFilesUnmodified) {
  if (!fs::is_directory(kShared)) GTEST_SKIP() << kShared << " does not exist (a checkout without ../shared): nothing to compare";
  std::set<std::string> shared = traces_in(kShared);
  EXPECT_EQ(traces_in(kData), shared);
  shared.insert(kTarball);
  for (const std::string& name : shared) {
    ASSERT_TRUE(fs::exists(kData / name)) << name << " is in " << kShared << " but not in tests/data";
    EXPECT_EQ(ttap::suite::read_file((kData / name).string()), ttap::suite::read_file((kShared / name).string())) << name;
  }
}

}  // namespace
