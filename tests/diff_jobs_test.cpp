// `ttap diff` across different jobs, on real traces: base and new on different GPU models,
// world sizes or ranks are named in a warning; each side's devices are labeled as that
// side names them; the peak-memory gate row stays when one side has no [memory] events
// ("n/a"); the JSON verdict is a value (pass/fail) with the sentence beside it.
#include <gtest/gtest.h>
#include <simdjson.h>

#include "json_support.hpp"
#include "suite_support.hpp"

namespace {

using ttap::suite::data_path;
using ttap::suite::ProcResult;
using ttap::suite::run_ttap;

const std::string kResnetV100 = data_path("kineto_resnet50_v100_nw0.json.gz");     // Tesla V100-DGXS-32GB, [memory] events
const std::string kCnnV100 = data_path("hta_ddp_cnn_v100_nsres.json.gz");           // Tesla V100-SXM2-32GB, world size 1
const std::string kDdpA100 = data_path("hta_ddp_a100_nccl.json.gz");                // NVIDIA A100-PG509-200, world size 2
const std::string kRank0 = data_path("param_dlrm_v100_8ranks/rank0.json.gz");       // rank 0 of 8
const std::string kRank1 = data_path("param_dlrm_v100_8ranks/rank1.json.gz");       // rank 1 of 8

using ttap::test_json::parse;

std::vector<std::string> warnings_of(simdjson::dom::element doc) {
  std::vector<std::string> out;
  for (auto w : doc["warnings"].get_array()) out.emplace_back(std::string_view(w));
  return out;
}

bool any_has(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x.find(s) != std::string::npos) return true;
  return false;
}

TEST(DiffJobs, DifferentGpuModelsAndWorldSizesAreNamed) {
  const ProcResult r = run_ttap({"diff", "--format", "json", kDdpA100, kCnnV100});
  ASSERT_LE(r.exit_code, 1) << r.err;
  simdjson::dom::parser p;
  const auto doc = parse(p, r.out);
  const auto w = warnings_of(doc);
  EXPECT_TRUE(any_has(w, "different GPUs (base: NVIDIA A100-PG509-200; new: Tesla V100-SXM2-32GB)")) << r.out.substr(0, 800);
  EXPECT_TRUE(any_has(w, "different world sizes (base: 2, new: 1)")) << r.out.substr(0, 800);
  EXPECT_FALSE(any_has(w, "different ranks"));
  EXPECT_NE(r.err.find("warning: base and new ran on different GPUs"), std::string::npos) << r.err;
  // The text form says it above the tables.
  const ProcResult text = run_ttap({"diff", kDdpA100, kCnnV100});
  EXPECT_NE(text.out.find("\nwarning: base and new ran on different GPUs"), std::string::npos) << text.out.substr(0, 600);
  // Each side's devices as they are, not one device number for both.
  EXPECT_NE(text.out.find("GPU 0 (NVIDIA A100-PG509-200)"), std::string::npos);
  EXPECT_NE(text.out.find("GPU 0 (Tesla V100-SXM2-32GB)"), std::string::npos);
}

TEST(DiffJobs, DifferentRanksOfOneJobAreNamed) {
  const ProcResult r = run_ttap({"diff", "--format", "json", kRank0, kRank1});
  ASSERT_LE(r.exit_code, 1) << r.err;
  simdjson::dom::parser p;
  const auto w = warnings_of(parse(p, r.out));
  ASSERT_EQ(w.size(), 1u) << r.out.substr(0, 800);
  EXPECT_NE(w[0].find("different ranks (base: rank 0, new: rank 1)"), std::string::npos) << w[0];
}

TEST(DiffJobs, SameSetupHasNoWarnings) {
  const ProcResult r = run_ttap({"diff", "--format", "json", kRank0, kRank0});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser p;
  const auto doc = parse(p, r.out);
  EXPECT_TRUE(warnings_of(doc).empty());
  EXPECT_EQ(std::string_view(doc["verdict"]), "pass");
  EXPECT_EQ(std::string_view(doc["verdict_text"]), "no regression above 7%");
}

TEST(DiffJobs, MemoryGateRowStaysWhenOneSideHasNoMemoryEvents) {
  const ProcResult r = run_ttap({"diff", "--format", "json", kResnetV100, kCnnV100});
  ASSERT_LE(r.exit_code, 1) << r.err;
  simdjson::dom::parser p;
  const auto doc = parse(p, r.out);
  bool found = false;
  for (auto t : doc["tables"].get_array()) {
    if (std::string_view(t["id"]) != "gates") continue;
    for (auto row : t["rows"].get_array()) {
      if (std::string_view(row.at(0)) != "peak device memory") continue;
      found = true;
      EXPECT_NE(std::string(std::string_view(row.at(1))).find(" MB"), std::string::npos) << "base has [memory] events";
      EXPECT_EQ(std::string_view(row.at(2)), "n/a");
      EXPECT_TRUE(row.at(3).is_null()) << "no delta without both sides";
      EXPECT_EQ(std::string_view(row.at(4)), "n/a (none in new)");
    }
  }
  EXPECT_TRUE(found) << r.out.substr(0, 1500);
}

TEST(DiffJobs, VerdictIsAValueWithTheSentenceBeside) {
  const std::string nw4 = data_path("kineto_resnet50_v100_nw4.json.gz");
  const ProcResult r = run_ttap({"diff", "--format", "json", nw4, kResnetV100});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  simdjson::dom::parser p;
  const auto doc = parse(p, r.out);
  EXPECT_EQ(std::string_view(doc["verdict"]), "fail");
  EXPECT_EQ(std::string(std::string_view(doc["verdict_text"])).rfind("REGRESSION above 7%: step time (median) +39.3%", 0), 0u);
  EXPECT_TRUE(warnings_of(doc).empty()) << "the same job on the same machine";
}

}  // namespace
