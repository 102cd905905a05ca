// Findings a user can believe (issue 12, item 0), audit of the eleventh round: evidence lines
// read "1 synchronizing calls (cudaDeviceSynchronize x1) block the host 14.1 ms in total"
// (host_sync, tracelens_qwen05b_h100), "1 copies from/to pageable host memory"
// (kineto_resnet50_v100_nw4) and "1 copies of at least 64 KB in the range have a same-size copy
// the other way" (rules/vit_nsfw_h100_offload_pingpong),
// and the window strip "1 windows over". Counts in the rules' lines now go through count_text
// (rule_index.hpp), with the verb agreeing.
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "suite_support.hpp"
#include "test_util.hpp"

namespace {

using namespace ttap;

// Every evidence line and fix of every window, every window flagged.
std::string all_lines(const std::string& trace) {
  const TraceReport r = rules_support::analyze_all_windows(rules_support::load(test::data(trace)));
  std::string lines;
  for (const FlaggedWindow& w : r.flagged)
    for (const Finding& f : w.findings) {
      for (const std::string& line : f.evidence) lines += line + "\n";
      lines += f.fix + "\n";
    }
  return lines;
}

TEST(BelievableAudit5Plurals, OneIsSingular) {
  const std::string qwen = all_lines("tracelens_qwen05b_h100.json.gz");
  EXPECT_NE(qwen.find("1 synchronizing call (cudaDeviceSynchronize x1) blocks the host"), std::string::npos) << qwen;
  const std::string pingpong = all_lines("rules/vit_nsfw_h100_offload_pingpong.json.gz");
  EXPECT_NE(pingpong.find("1 copy of at least 64 KB in the range has a same-size copy the other way"), std::string::npos)
      << pingpong;
  const std::string nw4 = all_lines("kineto_resnet50_v100_nw4.json.gz");
  EXPECT_NE(nw4.find("1 copy from/to pageable host memory"), std::string::npos) << nw4;
  for (const std::string& lines : {qwen, pingpong, nw4})
    for (const char* wrong : {"\n1 synchronizing calls", "\n1 copies", " 1 copies", "(1 copies)", " 1 waits", " 1 times",
                              "\n1 dtype-cast kernels", "\n1 memory-format conversion kernels", " 1 kernels"})
      EXPECT_EQ(lines.find(wrong), std::string::npos) << wrong;
}

// hta_torchrec_a100_rank0's redundant_copy read "3 device-to-device copies of at least 1.0 MB (3
// Memcpy DtoD, 0 contiguous/clone kernels)": a kind that is not there is not counted.
TEST(BelievableAudit5Plurals, NoKindCountedAtZero) {
  const std::string torchrec = all_lines("hta_torchrec_a100_rank0.json.gz");
  EXPECT_NE(torchrec.find("device-to-device copies of at least 1.0 MB (3 Memcpy DtoD)"), std::string::npos) << torchrec;
  EXPECT_EQ(torchrec.find("0 contiguous/clone"), std::string::npos) << torchrec;
}

TEST(BelievableAudit5Plurals, OneWindowIsSingular) {
  const auto r = suite::analyze({"--threads", "1", "--fail-on", "none", "--windows", "1", suite::data_path("hta_mi250_toy.json.gz")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("; 1 window over "), std::string::npos) << r.out;
}

}  // namespace
