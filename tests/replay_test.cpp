// `ttap replay` writes a script that really runs: here with Debian's python3-torch on the
// CPU (installed by scripts/install-deps.sh).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "test_util.hpp"

namespace {

using ttap::test::data;
using ttap::test::run_ttap;
using ttap::test::temp_file;

bool python_has_torch() { return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0; }

std::string run_script(const std::string& script, int& exit_code) {
  // Its own folder: a stray module beside the script (say inspect.py in /tmp) would
  // shadow the standard library.
  const std::string dir = ttap::test::temp_dir() + "/replay";
  std::filesystem::create_directories(dir);
  const std::string out = dir + "/out.txt";
  exit_code = WEXITSTATUS(std::system(("cd " + dir + " && /usr/bin/python3 " + script + " --device cpu --iters 1 >" + out + " 2>&1").c_str()));
  std::ifstream in(out);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(Replay, ScriptsRunOnTheCpu) {
  if (!python_has_torch()) GTEST_SKIP() << "/usr/bin/python3 has no torch (scripts/install-deps.sh installs python3-torch)";
  struct Case {
    const char* trace;
    const char* op;
  };
  for (const Case& c : {Case{"tracelens_vit_nsfw_h100.json.gz", "aten::addmm"}, Case{"tracelens_qwen05b_h100.json.gz", "aten::mm"},
                        Case{"tracelens_vit_nsfw_h100.json.gz", "aten::native_layer_norm"},
                        Case{"kineto_resnet50_v100_nw0.json.gz", "aten::add_"}}) {
    const std::string script = temp_file("replay_" + std::string(c.op).substr(6) + ".py", "");
    const auto r = run_ttap("replay " + data(c.trace) + " --op " + c.op + " -o " + script);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    int code = -1;
    const std::string out = run_script(script, code);
    EXPECT_EQ(code, 0) << c.op << ":\n" << out;
    EXPECT_NE(out.find(std::string(c.op) + " on cpu"), std::string::npos) << out;
  }
}

TEST(Replay, PicksTheSlowestInstanceAndExplainsMissingOps) {
  const auto r = run_ttap("replay " + data("tracelens_vit_nsfw_h100.json.gz") + " --op aten::addmm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The slowest of the 73 addmm launches 14.176 us of GPU work (tests/golden: max of the
  // sm90_xmma kernel).
  EXPECT_NE(r.out.find("1 GPU kernel(s), 14.176 us in all"), std::string::npos) << r.out.substr(0, 600);
  EXPECT_NE(r.out.find("INPUT_DIMS = json.loads(r'''[[3072],[788,768],[768,3072],[],[]]''')"), std::string::npos);
  EXPECT_EQ(run_ttap("replay " + data("tracelens_vit_nsfw_h100.json.gz") + " --op aten::nope").exit_code, 2);
  EXPECT_EQ(run_ttap("replay " + data("tracelens_vit_nsfw_h100.json.gz") + " --op aten::addmm --index 73").exit_code, 2);
  EXPECT_EQ(run_ttap("replay " + data("tracelens_vit_nsfw_h100.json.gz") + " --op aten::addmm --index 72").exit_code, 0);
}

}  // namespace
