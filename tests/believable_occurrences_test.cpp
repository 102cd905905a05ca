// Findings a user can believe (issue 12, item 0), on the newer public traces: a grouped
// finding's cost lies within the occurrences it lists, and GPU idle time is blamed on what
// the host was doing during it. Before, on tracelens_vllm_b200_eager, gpu_idle read
// "2 occurrences: +8.981 ms .. +8.989 ms, +12.780 ms .. +13.625 ms ... costs 22.1 ms"
// (the whole steady state's idle, located by the kernels that ended two of its gaps), and
// tracelens_sglang_qwen3_8b_prefilldecode blamed its 493 ms idle "in aten::gather", the op
// whose kernel ran after it, while the main thread spent it in forward_batch_info.py's init_new.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../src/classify/classify.hpp"
#include "rules_support.hpp"
#include "suite_support.hpp"
#include "ttap/load.hpp"

namespace {

using namespace ttap;

TraceReport analyze_all_windows(const std::string& name) {
  return rules_support::analyze_all_windows(rules_support::load(suite::data_path(name)));
}

// Every real trace of tests/data with GPU work (the MTIA one has none to be idle).
const std::vector<std::string> kTraces = {
    "hta_alexnet_a100_small.json.gz",           "hta_ddp_a100_nccl.json.gz",
    "hta_ddp_cnn_v100_nsres.json.gz",           "hta_event_sync_small.json.gz",
    "hta_mi250_toy.json.gz",                    "hta_no_distributed_info.json.gz",
    "hta_sampled_rank0.json.gz",                "hta_sampled_rank1.json.gz",
    "hta_torchrec_a100_rank0.json.gz",          "kineto_resnet50_v100_nw0.json.gz",
    "kineto_resnet50_v100_nw4.json.gz",         "param_resnet_2080ti.json.gz",
    "tracelens_owlv2_mi300.json.gz",            "tracelens_qwen05b_h100.json.gz",
    "tracelens_qwen05b_mi300.json.gz",          "tracelens_resnet_ckpt_mi300.json.gz",
    "tracelens_sglang_decode_bs32.json.gz",     "tracelens_sglang_qwen3_8b_prefilldecode.json.gz",
    "tracelens_vit_nsfw_h100.json.gz",          "tracelens_vllm_b200_eager.json.gz",
    "tracelens_vllm_piecewise_capture.json.gz", "tracelens_vllm_piecewise_graph_execution.json.gz",
    "tracelens_xdit_flux1_capture.json.gz"};

TEST(BelievableOccurrences, ACostLiesWithinTheOccurrencesItLists) {
  size_t checked = 0;
  for (const std::string& name : kTraces) {
    const TraceReport r = analyze_all_windows(name);
    for (const GroupedFinding& g : r.findings) {
      if (g.occurrences.size() < g.occurrence_count) continue;  // not all listed
      int64_t listed = 0;
      for (const Occurrence& o : g.occurrences) listed += o.end - o.begin;
      EXPECT_LE(g.cost, listed + 1000) << name << " " << g.id << " in " << g.origin << ": " << g.occurrence_count
                                       << " occurrences of " << listed << " ns in all, cost " << g.cost << " ns";
      ++checked;
    }
  }
  EXPECT_GT(checked, 20u);
}

TEST(BelievableOccurrences, GpuIdleIsBlamedOnWhatTheHostDidMeanwhile) {
  const TraceReport r = analyze_all_windows("tracelens_sglang_qwen3_8b_prefilldecode.json.gz");
  const GroupedFinding* worst = nullptr;
  for (const GroupedFinding& g : r.findings)
    if (g.id == "gpu_idle" && (!worst || g.cost > worst->cost)) worst = &g;
  ASSERT_NE(worst, nullptr);
  EXPECT_GT(worst->cost, 400'000'000);  // the 493 ms gap
  EXPECT_NE(worst->origin.find("forward_batch_info.py(443): init_new"), std::string::npos) << worst->origin;
  ASSERT_FALSE(worst->locations.empty());
  EXPECT_NE(worst->locations.front().file.find("forward_batch_info.py"), std::string::npos)
      << worst->locations.front().file;
}

}  // namespace
