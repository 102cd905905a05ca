// Rule detectors (src/rules/) on real traces: each id fires where the trace shows its
// pattern and stays quiet where it must not, the evidence carries figures, and every
// public trace goes through the engine over 100 windows without a crash.
#include <gtest/gtest.h>

#include <cmath>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "test_util.hpp"
#include "ttap/catalog.hpp"
#include "ttap/load.hpp"
#include "ttap/rules.hpp"
#include "ttap/windows.hpp"
#include "rules_support.hpp"

namespace {

namespace fs = std::filesystem;
using ttap::rules_support::evidence_has;
using ttap::rules_support::load;
using ttap::rules_support::Loaded;
const Loaded& data(const std::string& name) { return load(ttap::test::data(name)); }

// Every finding of every window, by id.
std::map<std::string, std::vector<ttap::RuleFinding>> by_id(const Loaded& l) {
  std::map<std::string, std::vector<ttap::RuleFinding>> m;
  for (auto [b, e] : l.windows)
    for (auto& f : l.engine->detect(b, e)) m[f.id].push_back(f);
  return m;
}

std::set<std::string> fired(const Loaded& l) {
  std::set<std::string> s;
  for (auto& [id, v] : by_id(l)) s.insert(id);
  return s;
}

std::string dump(const std::vector<ttap::RuleFinding>& v) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < 2; ++i) {
    s += v[i].id + " conf " + std::to_string(v[i].confidence) + "\n";
    for (auto& e : v[i].evidence) s += "  " + e + "\n";
    s += "  fix: " + v[i].fix + "\n";
  }
  return s;
}

// Each public trace once: tests/data first, then what only the shared folder has.
std::vector<std::string> public_traces() {
  std::vector<std::string> v;
  std::set<std::string> names;
  for (const char* dir : {TTAP_TEST_DATA_DIR, TTAP_SHARED_TRACES}) {
    if (!fs::is_directory(dir)) continue;
    for (auto& p : fs::recursive_directory_iterator(dir)) {
      const std::string s = p.path().string();
      if ((s.ends_with(".json.gz") || s.ends_with(".json")) && names.insert(p.path().filename().string()).second)
        v.push_back(s);
    }
  }
  std::sort(v.begin(), v.end());
  return v;
}

TEST(RulesAllTraces, TableOfIdsPerTrace) {
  std::map<std::string, std::map<std::string, std::pair<int, double>>> table;  // trace -> id -> (windows, best conf)
  const char* dump_env = std::getenv("TTAP_RULES_DUMP");  // a trace name: print its best finding per id
  for (const std::string& path : public_traces()) {
    if (dump_env != nullptr && path.find(dump_env) != std::string::npos) {
      for (auto& [id, v] : by_id(load(path))) {
        auto best = std::max_element(v.begin(), v.end(), [](auto& a, auto& b) { return a.confidence < b.confidence; });
        std::printf("%s", dump({*best}).c_str());
      }
    }
    const Loaded& l = load(path);
    for (auto [b, e] : l.windows) {
      for (const ttap::RuleFinding& f : l.engine->detect(b, e)) {
        EXPECT_TRUE(ttap::is_catalog_id(f.id)) << f.id;
        EXPECT_GE(f.confidence, 0.0);
        EXPECT_LE(f.confidence, 1.0);
        EXPECT_GE(f.cost, 0) << f.id;
        EXPECT_LE(f.begin, f.end) << f.id;
        EXPECT_FALSE(f.evidence.empty()) << f.id;
        EXPECT_FALSE(f.fix.empty()) << f.id;
        auto& cell = table[fs::path(path).filename().string()][f.id];
        ++cell.first;
        cell.second = std::max(cell.second, f.confidence);
      }
    }
    table[fs::path(path).filename().string()];
  }
  std::string out;
  for (auto& [trace, ids] : table) {
    out += trace + ":";
    for (auto& [id, c] : ids) out += " " + id + "(" + std::to_string(c.first) + "w," + std::to_string(c.second).substr(0, 4) + ")";
    out += "\n";
  }
  std::printf("%s", out.c_str());
}


const Loaded& fixture(const std::string& name) { return data("rules/" + name); }
// A trace of the labeled corpus (data/ttap-bench/traces), part of the repository.
const Loaded& corpus(const std::string& name) {
  return load(std::string(TTAP_SOURCE_DIR) + "/data/ttap-bench/traces/" + name);
}

// A public trace of ../shared/traces/public, read from its copy in tests/data; nullptr
// (and the test skipped, naming the file) when the copy is missing.
const Loaded* shared(const std::string& name) {
  const std::string path = std::string(TTAP_TEST_DATA_DIR) + "/" + name;
  return fs::exists(path) ? &load(path) : nullptr;
}
#define SHARED_OR_SKIP(var, name)                                                   \
  const Loaded* var = shared(name);                                                 \
  if (var == nullptr) GTEST_SKIP() << TTAP_TEST_DATA_DIR << " has no " << name

// The finding of `id` with the highest confidence over the windows (fails when none).
ttap::RuleFinding strongest(const Loaded& l, const std::string& id) {
  auto m = by_id(l);
  auto it = m.find(id);
  if (it == m.end()) {
    ADD_FAILURE() << id << " did not fire";
    return {};
  }
  return *std::max_element(it->second.begin(), it->second.end(),
                           [](auto& a, auto& b) { return a.confidence < b.confidence; });
}

// Findings over the whole steady state as one range.
std::vector<ttap::RuleFinding> whole(const Loaded& l, const std::string& id) {
  std::vector<ttap::RuleFinding> v;
  for (auto& f : l.engine->detect(l.begin, l.end))
    if (f.id == id) v.push_back(f);
  return v;
}

TEST(RulesHostSync, ScalarReadsFireUploadSyncsDoNot) {
  // An .item() inserted into ViT: the sync under aten::_local_scalar_dense, the GPU idle after.
  const auto f = strongest(fixture("vit_nsfw_h100_host_sync.json.gz"), "host_sync");
  EXPECT_TRUE(evidence_has(f, "cudaStreamSynchronize")) << dump({f});
  EXPECT_TRUE(evidence_has(f, "under aten::_local_scalar_dense")) << dump({f});
  EXPECT_GT(f.cost, 0);
  EXPECT_NE(f.fix.find("keep the value on the device"), std::string::npos);
  EXPECT_FALSE(fired(data("tracelens_vit_nsfw_h100.json.gz")).count("host_sync"));
  // HTA's event-sync example: cudaEventSynchronize and .item() in one step.
  EXPECT_TRUE(fired(data("hta_event_sync_small.json.gz")).count("host_sync"));
  // nw4's cudaStreamSynchronize calls only complete pageable input uploads.
  EXPECT_FALSE(fired(data("kineto_resnet50_v100_nw4.json.gz")).count("host_sync"));
}

TEST(RulesPageableMemcpy, InputUploadsWithoutPinnedMemory) {
  const auto f = strongest(data("kineto_resnet50_v100_nw0.json.gz"), "pageable_memcpy");
  EXPECT_TRUE(evidence_has(f, "18.4 MB")) << dump({f});
  EXPECT_NE(f.fix.find("pin_memory=True"), std::string::npos);
  EXPECT_FALSE(fired(data("tracelens_vit_nsfw_h100.json.gz")).count("pageable_memcpy"));
  EXPECT_FALSE(fired(data("tracelens_qwen05b_h100.json.gz")).count("pageable_memcpy"));
}

TEST(RulesSmallTransfers, ManySmallUploadsFireOneLabelCopyPerStepDoesNot) {
  const auto f = strongest(data("hta_alexnet_a100_small.json.gz"), "small_transfers");
  EXPECT_TRUE(evidence_has(f, "HtoD")) << dump({f});
  EXPECT_FALSE(fired(data("kineto_resnet50_v100_nw0.json.gz")).count("small_transfers"));
}

TEST(RulesOffloadPingpong, SameSizeRoundTripAcrossWindows) {
  const auto f = strongest(fixture("vit_nsfw_h100_offload_pingpong.json.gz"), "offload_pingpong");
  EXPECT_TRUE(evidence_has(f, "128.0 MB")) << dump({f});
  EXPECT_GE(f.confidence, 0.9);
  EXPECT_FALSE(fired(data("tracelens_vit_nsfw_h100.json.gz")).count("offload_pingpong"));
  EXPECT_FALSE(fired(data("kineto_resnet50_v100_nw0.json.gz")).count("offload_pingpong"));
}

TEST(RulesDataLoaderStall, SingleProcessLoaderFiresFourWorkersDoNot) {
  const Loaded& nw0 = data("kineto_resnet50_v100_nw0.json.gz");
  const auto f = strongest(nw0, "dataloader_stall");
  EXPECT_GE(f.confidence, 0.9);
  EXPECT_TRUE(evidence_has(f, "num_workers=0")) << dump({f});
  EXPECT_NE(f.fix.find("num_workers"), std::string::npos);
  // About 40% of each step: dozens of the 100 windows sit inside a loader stall.
  EXPECT_GE(by_id(nw0)["dataloader_stall"].size(), 20u);
  EXPECT_FALSE(fired(data("kineto_resnet50_v100_nw4.json.gz")).count("dataloader_stall"));
  // A one-step excerpt of nw0 whose step opens with the loader wait: no kernel of the trace
  // ran before it, yet the GPU waits there all the same.
  const Loaded& one = corpus("surgery_0017_kineto_resnet50_v100_nw0.json.gz");
  ASSERT_EQ(one.tree.steps().size(), 1u);
  const auto first = by_id(one)["dataloader_stall"];
  ASSERT_FALSE(first.empty());
  EXPECT_LT(first.front().begin, one.begin + 20'000'000) << "fires in the step's first 20 ms";
}

TEST(RulesCpuBoundStep, HostOpsInTheStepFireAnUnexplainedGapDoesNot) {
  const auto f = strongest(fixture("vit_nsfw_h100_cpu_bound_step.json.gz"), "cpu_bound_step");
  const bool named = evidence_has(f, "aten::cat") || evidence_has(f, "aten::histc") || evidence_has(f, "aten::sort");
  EXPECT_TRUE(named) << dump({f});
  EXPECT_FALSE(fired(data("tracelens_vit_nsfw_h100.json.gz")).count("cpu_bound_step"));
  // A stretch with no identified host work is gpu_idle's, not cpu_bound_step's.
  EXPECT_FALSE(fired(fixture("vit_nsfw_h100_gpu_idle.json.gz")).count("cpu_bound_step"));
}

TEST(RulesGpuIdle, UnexplainedGapFiresCleanTraceDoesNot) {
  const auto f = strongest(fixture("vit_nsfw_h100_gpu_idle.json.gz"), "gpu_idle");
  EXPECT_LE(f.confidence, 0.7);  // the catch-all never claims certainty
  EXPECT_FALSE(fired(data("tracelens_vit_nsfw_h100.json.gz")).count("gpu_idle"));
}

TEST(RulesLaunchBound, ShortKernelsStarveTheGpu) {
  const auto f = strongest(data("hta_ddp_a100_nccl.json.gz"), "launch_bound");
  EXPECT_TRUE(evidence_has(f, "shorter than their launch call")) << dump({f});
  // The ViT inference step: no 79 us window holds enough kernels to judge, but across the
  // step the GPU idles 80% in short gaps that end at each launch, while most kernels outlast
  // their launch calls: the host's per-op work, not the launch call, starves the GPU.
  const Loaded& vit = data("tracelens_vit_nsfw_h100.json.gz");
  EXPECT_FALSE(fired(vit).count("launch_bound"));
  const auto step = whole(vit, "launch_bound");
  ASSERT_EQ(step.size(), 1u);
  EXPECT_GE(step[0].confidence, 0.9) << dump(step);
  EXPECT_TRUE(evidence_has(step[0], "most kernels outlast their launch call")) << dump(step);
  EXPECT_EQ(step[0].severity, ttap::Severity::error);  // 6.3 ms of a 7.9 ms step
  // The overhead path needs twice the starved share: the conv net training on a V100, whose
  // windows of short kernels fire on the launch calls, gains no window from it.
  auto nw4 = by_id(data("kineto_resnet50_v100_nw4.json.gz"));
  for (const auto& g : nw4["launch_bound"])
    EXPECT_FALSE(evidence_has(g, "most kernels outlast")) << dump({g});
  SHARED_OR_SKIP(vllm, "tracelens_vllm_b200_eager.json.gz");
  EXPECT_GE(by_id(*vllm)["launch_bound"].size(), 30u);  // eager decoding, step after step
}

TEST(RulesOptimizerSingleTensor, PerParameterSgdFires) {
  const auto f = strongest(data("kineto_resnet50_v100_nw0.json.gz"), "optimizer_single_tensor");
  EXPECT_TRUE(evidence_has(f, "Optimizer.step#SGD.step")) << dump({f});
  EXPECT_NE(f.fix.find("torch.optim.SGD(..., foreach=True)"), std::string::npos);
  EXPECT_FALSE(fired(data("tracelens_qwen05b_h100.json.gz")).count("optimizer_single_tensor"));
  SHARED_OR_SKIP(mi300, "tracelens_resnet_ckpt_mi300.json.gz");  // torch 2.x SGD: foreach by default
  EXPECT_FALSE(fired(*mi300).count("optimizer_single_tensor"));
}

TEST(RulesGradNotSetToNone, ZeroGradKernelsFireSetToNoneDoesNot) {
  const auto f = strongest(data("kineto_resnet50_v100_nw0.json.gz"), "grad_not_set_to_none");
  EXPECT_TRUE(evidence_has(f, "aten::fill_")) << dump({f});
  EXPECT_NE(f.fix.find("set_to_none=True"), std::string::npos);
  // Optimizer.zero_grad spans that launch nothing (set_to_none).
  EXPECT_FALSE(fired(data("hta_ddp_cnn_v100_nsres.json.gz")).count("grad_not_set_to_none"));
}

TEST(RulesUnfusedElementwise, EagerLlmChainsFireCnnDoesNot) {
  const auto f = strongest(data("tracelens_qwen05b_h100.json.gz"), "unfused_elementwise");
  EXPECT_TRUE(evidence_has(f, "back-to-back elementwise kernels")) << dump({f});
  EXPECT_FALSE(fired(data("kineto_resnet50_v100_nw0.json.gz")).count("unfused_elementwise"));
}

TEST(RulesFp32NoTensorCores, Fp32V100FiresBf16H100DoesNot) {
  const auto f = strongest(data("kineto_resnet50_v100_nw0.json.gz"), "fp32_no_tensor_cores");
  EXPECT_TRUE(evidence_has(f, "V100")) << dump({f});
  EXPECT_NE(f.fix.find("autocast"), std::string::npos);
  EXPECT_FALSE(fired(data("tracelens_vit_nsfw_h100.json.gz")).count("fp32_no_tensor_cores"));
  EXPECT_FALSE(fired(data("tracelens_qwen05b_h100.json.gz")).count("fp32_no_tensor_cores"));
}

TEST(RulesLayoutConversion, NchwToNhwcAroundConvolutions) {
  const auto f = strongest(data("hta_ddp_a100_nccl.json.gz"), "layout_conversion");
  EXPECT_TRUE(evidence_has(f, "nchwToNhwc")) << dump({f});
  EXPECT_NE(f.fix.find("channels_last"), std::string::npos);
  EXPECT_FALSE(fired(data("kineto_resnet50_v100_nw0.json.gz")).count("layout_conversion"));
}

TEST(RulesCastChurn, CastsEveryStepFireContiguousCopiesDoNot) {
  const Loaded& cast = fixture("qwen05b_h100_cast_churn.json.gz");
  const auto f = strongest(cast, "cast_churn");
  EXPECT_TRUE(evidence_has(f, "c10::BFloat16 to float")) << dump({f});
  EXPECT_FALSE(fired(data("tracelens_qwen05b_h100.json.gz")).count("cast_churn"));
  // The same kernels under .contiguous() are redundant copies, under .float() casts.
  EXPECT_TRUE(fired(data("tracelens_qwen05b_h100.json.gz")).count("redundant_copy"));
  EXPECT_FALSE(fired(cast).count("redundant_copy"));
}

TEST(RulesAllocChurn, AllocatorCallsInTheStepFire) {
  const auto f = strongest(fixture("vit_nsfw_h100_alloc_churn.json.gz"), "alloc_churn");
  // Its strongest window holds one cudaFree (named as recorded, no "0 cudaMalloc" beside it).
  EXPECT_TRUE(evidence_has(f, "1 cudaFree call in the trace's one recorded step")) << dump({f});
  EXPECT_FALSE(fired(data("tracelens_vit_nsfw_h100.json.gz")).count("alloc_churn"));
  EXPECT_FALSE(fired(data("kineto_resnet50_v100_nw0.json.gz")).count("alloc_churn"));
}

TEST(RulesRedundantCopy, DdpBucketCopies) {
  const auto f = strongest(data("hta_ddp_cnn_v100_nsres.json.gz"), "redundant_copy");
  EXPECT_TRUE(evidence_has(f, "Memcpy DtoD")) << dump({f});
  EXPECT_NE(f.fix.find("gradient_as_bucket_view=True"), std::string::npos);
  EXPECT_FALSE(fired(data("kineto_resnet50_v100_nw0.json.gz")).count("redundant_copy"));
}

TEST(RulesLowOccupancy, SmallGridsOnABigGpu) {
  const auto f = strongest(data("tracelens_vit_nsfw_h100.json.gz"), "low_occupancy");
  EXPECT_TRUE(evidence_has(f, "132 SMs")) << dump({f});
  EXPECT_FALSE(fired(data("kineto_resnet50_v100_nw0.json.gz")).count("low_occupancy"));
}

TEST(RulesCommNotOverlapped, DdpAllReduceExposed) {
  const auto f = strongest(data("hta_ddp_a100_nccl.json.gz"), "comm_not_overlapped");
  EXPECT_TRUE(evidence_has(f, "with no compute kernel running")) << dump({f});
  EXPECT_NE(f.fix.find("bucket_cap_mb"), std::string::npos);  // a DDP job gets DDP's knobs
  for (int r = 0; r < 8; ++r)
    EXPECT_TRUE(fired(data("param_dlrm_v100_8ranks/rank" + std::to_string(r) + ".json.gz")).count("comm_not_overlapped"));
  EXPECT_FALSE(fired(data("kineto_resnet50_v100_nw0.json.gz")).count("comm_not_overlapped"));
  // hta_ddp_cnn_v100_nsres records nccl:all_reduce ops but no collective kernels at all.
  EXPECT_FALSE(fired(data("hta_ddp_cnn_v100_nsres.json.gz")).count("comm_not_overlapped"));
}

TEST(RulesCommBlocksCompute, ComputeQueuedBehindCollectives) {
  const auto f = strongest(data("hta_ddp_a100_nccl.json.gz"), "comm_blocks_compute");
  EXPECT_TRUE(evidence_has(f, "in 1 wait on collectives")) << dump({f});
  EXPECT_FALSE(fired(data("kineto_resnet50_v100_nw0.json.gz")).count("comm_blocks_compute"));
}

TEST(RulesGraphBreaks, EagerLayerBetweenCompiledRegions) {
  const auto f = strongest(fixture("vit_nsfw_h100_graph_breaks.json.gz"), "graph_breaks");
  EXPECT_TRUE(evidence_has(f, "Torch-Compiled Region")) << dump({f});
  EXPECT_NE(f.fix.find("TORCH_LOGS=graph_breaks"), std::string::npos);
  EXPECT_FALSE(fired(data("tracelens_vit_nsfw_h100.json.gz")).count("graph_breaks"));
  SHARED_OR_SKIP(vllm, "tracelens_vllm_b200_eager.json.gz");  // one compiled region, no break
  EXPECT_FALSE(fired(*vllm).count("graph_breaks"));
}

// CPU-only zoo runs from the corpus (data/ttap-bench, Debian's torch on the CPU): the work
// is CPU ops, so the rules that judge kernels or launches on a GPU judge the main thread's
// calls. Each injected id fires in the injected run's windows; the clean run of the same
// workload fires none of these ids.

TEST(RulesOnCpuOnlyTraces, InjectedCallsFireTheCleanRunsDoNot) {
  const auto ssd = by_id(corpus("zoo_0135_ssdlite320_mobilenet_v3_large_inference.json.gz"));
  ASSERT_TRUE(ssd.count("cast_churn"));
  EXPECT_TRUE(evidence_has(ssd.at("cast_churn")[0], "aten::to calls that copy")) << dump(ssd.at("cast_churn"));
  ASSERT_TRUE(ssd.count("unfused_elementwise"));
  EXPECT_TRUE(evidence_has(ssd.at("unfused_elementwise")[0], "back-to-back elementwise calls"));
  const auto resnet = by_id(corpus("zoo_0144_resnet18_train.json.gz"));
  ASSERT_TRUE(resnet.count("redundant_copy"));
  EXPECT_TRUE(evidence_has(resnet.at("redundant_copy")[0], "clone/contiguous calls that copy"));
  // This run's injected copies are of a tiny input (67 us of a 1 s step): rightly below any
  // threshold. Its foreach AdamW calls aten::item per parameter (torch 1.13's
  // implementation), which is not a per-parameter loop.
  const auto deeplab = by_id(corpus("zoo_0104_deeplabv3_mobilenet_v3_large_train.json.gz"));
  EXPECT_FALSE(deeplab.count("redundant_copy"));
  EXPECT_FALSE(deeplab.count("optimizer_single_tensor"));

  const auto unet = by_id(corpus("zoo_0107_diffusion_unet_train.json.gz"));
  EXPECT_TRUE(unet.count("cast_churn"));
  ASSERT_TRUE(unet.count("optimizer_single_tensor"));
  EXPECT_TRUE(evidence_has(unet.at("optimizer_single_tensor")[0], "aten::mul_ x"))
      << dump(unet.at("optimizer_single_tensor"));
  ASSERT_TRUE(unet.count("grad_not_set_to_none"));
  EXPECT_TRUE(evidence_has(unet.at("grad_not_set_to_none")[0], "aten::zero_ x70"));

  const std::set<std::string> cpu_side = {"cast_churn", "redundant_copy", "unfused_elementwise", "layout_conversion",
                                          "optimizer_single_tensor", "grad_not_set_to_none"};
  for (const char* clean : {"zoo_0152_deeplabv3_mobilenet_v3_large_train.json.gz", "zoo_0011_diffusion_unet_train.json.gz"}) {
    const Loaded& l = corpus(clean);
    for (const auto& id : fired(l)) EXPECT_FALSE(cpu_side.count(id)) << clean << ": " << id;
    for (const auto& f : l.engine->detect(l.begin, l.end)) EXPECT_FALSE(cpu_side.count(f.id)) << clean << ": " << f.id;
  }
}

TEST(RulesLocations, UserFramesOnlyInnermostFirst) {
  const auto f = strongest(fixture("qwen05b_h100_cast_churn.json.gz"), "cast_churn");
  ASSERT_FALSE(f.locations.empty());
  EXPECT_EQ(f.locations[0].file, "transformers/integrations/sdpa_attention.py");
  EXPECT_EQ(f.locations[0].line, 18);
  EXPECT_EQ(f.locations[0].function, "sdpa_attention_forward");
  for (const char* name : {"tracelens_vit_nsfw_h100.json.gz", "tracelens_qwen05b_h100.json.gz"})
    for (auto& [id, v] : by_id(data(name)))
      for (auto& fd : v)
        for (auto& loc : fd.locations) {
          EXPECT_NE(loc.file.rfind("torch/", 0), 0u) << loc.file;
          EXPECT_NE(loc.file.front(), '<') << loc.file;
          EXPECT_NE(loc.file, "threading.py");
          EXPECT_GT(loc.line, 0);
        }
}

TEST(RulesEngine, SortedScoresAndEmptyRanges) {
  const Loaded& l = data("kineto_resnet50_v100_nw0.json.gz");
  std::vector<double> expected;
  for (auto [b, e] : l.windows) {
    const auto v = l.engine->detect(b, e);
    double best = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      // Confidence weighted by the cost's share of the window (rules.hpp).
      best = std::max(best, v[i].confidence * (1.0 - std::exp(-3.0 * static_cast<double>(v[i].cost) / static_cast<double>(e - b))));
      if (i > 0) {  // named_before: severity, then cost
        EXPECT_GE(v[i - 1].severity, v[i].severity);
        if (v[i - 1].severity == v[i].severity) {
          EXPECT_GE(v[i - 1].cost, v[i].cost);
        }
      }
    }
    expected.push_back(best);
  }
  EXPECT_EQ(l.engine->scores(l.windows), expected);
  EXPECT_TRUE(l.engine->detect(l.begin, l.begin).empty());          // empty range
  EXPECT_TRUE(l.engine->detect(l.end, l.begin).empty());            // reversed range
  EXPECT_TRUE(l.engine->detect(l.end + 1'000'000'000, l.end + 2'000'000'000).empty());  // after the trace
  // A CPU-only trace: nothing GPU-related can be claimed.
  const Loaded& cpu = data("hta_cpu_only.json.gz");
  for (auto [b, e] : cpu.windows) EXPECT_TRUE(cpu.engine->detect(b, e).empty());
}

// The constructor's indices make detect() on each of 100 windows cheap. Budgets are ten
// times what this 2-core VM measures, so a loaded machine does not fail them.
TEST(RulesEngine, HundredWindowsAreCheap) {
  std::vector<std::string> traces = {ttap::test::data("kineto_resnet50_v100_nw0.json.gz")};
  const std::string big = ttap::test::data("hta_mtia_no_gpu_large.json.gz");
  const std::string big_gpu = ttap::test::data("hta_torchrec_a100_rank0.json.gz");
  const std::string big_gpu2 = ttap::test::data("param_resnet_2080ti.json.gz");
  for (const auto& p : {big, big_gpu, big_gpu2})
    if (fs::exists(p)) traces.push_back(p);
  // TTAP_RULES_BENCH=FILE adds a trace to measure (e.g. scripts/bench/make_big_trace.py's).
  if (const char* extra = std::getenv("TTAP_RULES_BENCH")) traces.push_back(extra);
  for (const std::string& path : traces) {
    const ttap::Trace t = ttap::load_trace(path);
    const ttap::EventTree tree = ttap::EventTree::build(t);
    const auto t0 = std::chrono::steady_clock::now();
    const ttap::RuleEngine engine(t, tree);
    const auto t1 = std::chrono::steady_clock::now();
    const ttap::SteadyState s = ttap::steady_state(t, tree);
    size_t findings = 0;
    for (int64_t i = 0; i < 100; ++i)
      findings += engine.detect(s.begin + (s.end - s.begin) * i / 100, s.begin + (s.end - s.begin) * (i + 1) / 100).size();
    const auto t2 = std::chrono::steady_clock::now();
    const double ctor_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    const double detect_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
    std::printf("%s: %zu events, RuleEngine() %.1f ms, 100 x detect() %.1f ms (%.2f ms each), %zu findings\n",
                fs::path(path).filename().c_str(), t.size(), ctor_ms, detect_ms, detect_ms / 100, findings);
    EXPECT_LT(detect_ms, 5000.0);
  }
}
}  // namespace
