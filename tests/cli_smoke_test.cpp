// The ttap binary end to end: every subcommand and output format on real traces.
#include <gtest/gtest.h>

#include <fstream>

#include "test_util.hpp"

namespace {

using ttap::test::data;
using ttap::test::run_ttap;

const std::string kVit = data("tracelens_vit_nsfw_h100.json.gz");

TEST(Cli, VersionListsEveryComponent) {
  const auto r = run_ttap("--version");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"ttap 0.", "simdjson 3.", "libdeflate", "libcurl", "libtorch 1.", "sentencepiece module: /"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << " missing in\n" << r.out;
}

TEST(Cli, SummaryTextJsonCsv) {
  const auto text = run_ttap("summary " + kVit);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("GPU timeline"), std::string::npos);
  EXPECT_NE(text.out.find("aten::addmm"), std::string::npos);
  const auto json = run_ttap("summary --format json " + kVit);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out.rfind("{\"schema\":\"ttap.summary/1\"", 0), 0u);
  EXPECT_NE(json.out.find("\"id\":\"kernel_summary\""), std::string::npos);
  const auto csv = run_ttap("summary --format csv --table gpu_timeline " + kVit);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("device,type,time ms,percent\n0,computation_time,1.22531,", 0), 0u) << csv.out;
  EXPECT_EQ(run_ttap("summary --table nope " + kVit).exit_code, 2);
}

TEST(Cli, SummaryFromStdinAndToFile) {
  const auto r = run_ttap("summary --format csv --table steps -", kVit);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n6,7.894065,"), std::string::npos) << r.out;
  const std::string out = ttap::test::temp_file("summary.json", "");
  ASSERT_EQ(run_ttap("summary --format json -o " + out + " " + kVit).exit_code, 0);
  std::ifstream in(out);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first.rfind("{\"schema\"", 0), 0u);
  EXPECT_EQ(run_ttap("summary -o /nonexistent/dir/x.json " + kVit).exit_code, 2);
}

TEST(Cli, TreeStepDepthMatch) {
  const auto r = run_ttap("tree --step 6 --depth 2 " + kVit);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("(annotation) ProfilerStep#6  [7894.065 us]\n", 0), 0u) << r.out.substr(0, 200);
  EXPECT_NE(r.out.find("\n  (python) "), std::string::npos);
  EXPECT_EQ(r.out.find("\n      ("), std::string::npos) << "depth 2 prints no third level";
  const auto m = run_ttap("tree --match '^aten::addmm$' --depth 2 " + kVit);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("(cpu) aten::addmm"), std::string::npos);
  EXPECT_NE(m.out.find("(cuda_runtime) cudaLaunchKernel"), std::string::npos);
  EXPECT_NE(m.out.find("(kernel) "), std::string::npos);
  const auto whole = run_ttap("tree " + kVit);
  ASSERT_EQ(whole.exit_code, 0);
  EXPECT_NE(whole.out.find("# thread "), std::string::npos);
  const auto bad_step = run_ttap("tree --step 99 " + kVit);
  EXPECT_EQ(bad_step.exit_code, 2);
  EXPECT_NE(bad_step.err.find("has steps 6"), std::string::npos) << bad_step.err;
  EXPECT_EQ(run_ttap("tree --match '(' " + kVit).exit_code, 2);
}

TEST(Cli, AnalyzeHeadline) {
  const auto r = run_ttap("analyze --fail-on none " + kVit + " " + data("hta_cpu_only.json.gz"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU 0: busy 16.2% of 7.560 ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no GPU activity"), std::string::npos) << r.out;
}

}  // namespace
