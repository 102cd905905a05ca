// Findings a user can believe (issue 12, item 0), audit of the eleventh round: alloc_churn
// counted every allocator call as "cudaMalloc" or "cudaFree". tracelens_sglang_decode_bs32, a
// ROCm trace, read "0 cudaMalloc and 2 cudaFree calls after warm-up (past the first step)":
// the trace records two hipFree calls (296 and 185 us, under torch.cuda.empty_cache) in its
// one recorded step (ProfilerStep#134), so there was no first step to be past. The calls are
// named as recorded now, with the step said as it is; CUDA traces read as before.
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using namespace ttap;

// The evidence lines of every window's alloc_churn finding in a trace, every window flagged.
std::string alloc_evidence(const std::string& trace) {
  const TraceReport r = rules_support::analyze_all_windows(rules_support::load(test::data(trace)));
  std::string lines;
  for (const FlaggedWindow& w : r.flagged)
    for (const Finding& f : w.findings)
      if (f.id == "alloc_churn")
        for (const std::string& line : f.evidence) lines += line + "\n";
  return lines;
}

TEST(BelievableAudit5AllocNames, RocmCallsAreNamedAsRecorded) {
  const std::string lines = alloc_evidence("tracelens_sglang_decode_bs32.json.gz");
  EXPECT_NE(lines.find("2 hipFree calls in the trace's one recorded step, 481 us on the host"), std::string::npos) << lines;
  EXPECT_EQ(lines.find("cudaMalloc"), std::string::npos) << lines;
  EXPECT_EQ(lines.find("cudaFree"), std::string::npos) << lines;
  EXPECT_EQ(lines.find("past the first step"), std::string::npos) << lines;
}

TEST(BelievableAudit5AllocNames, CudaCallsKeepTheirNamesAndCounts) {
  // hta_alexnet_a100_small (no steps): ten cudaMalloc and two cudaFree calls past the first
  // fifth of the trace, in one window; no kind that was not called is counted as zero.
  const std::string lines = alloc_evidence("hta_alexnet_a100_small.json.gz");
  EXPECT_NE(lines.find("10 cudaMalloc calls and 2 cudaFree calls after warm-up (past the first fifth of the trace)"),
            std::string::npos)
      << lines;
  EXPECT_EQ(lines.find("and 0 cuda"), std::string::npos) << lines;
  EXPECT_NE(lines.rfind("0 cuda", 0), 0u) << lines;
  EXPECT_EQ(lines.find("\n0 cuda"), std::string::npos) << lines;
}

}  // namespace
