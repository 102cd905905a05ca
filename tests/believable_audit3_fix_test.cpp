// Findings a user can believe (issue 12, item 0), audit of the ninth round: a fix names
// something the user can change. When the host time that starves the GPU is the profiler's
// own bookkeeping (a record_function range entered or left: torch/autograd/profiler.py's
// __enter__/__exit__ over a pybind built-in), cpu_bound_step told the user to "move <built-in
// method  of pybind11_builtins.pybind11_detail_function_record_v1_..._abi_1 object at
// 0x7fe3f33f0b30> (zoo.py:150) off the step path": gpuzoo_0023's 315 us exit of the
// DataLoader's `__next__` range (and gpuzoo_0051's 1.43 ms ProfilerStep#3 enter). The fix
// now says what it is.
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "suite_support.hpp"

namespace {

using namespace ttap;

TEST(BelievableAudit3Fix, TheProfilersBookkeepingIsNoWorkToMove) {
  const TraceReport r = rules_support::analyze_all_windows(
      rules_support::load(suite::data_path("gpu_zoo/gpuzoo_0023_ssdlite320_mobilenet_v3_large_train.json.gz")));
  size_t bookkeeping = 0;
  for (const GroupedFinding& g : r.findings) {
    if (g.id != "cpu_bound_step") continue;
    if (g.fix.find("the profiler's own bookkeeping") == std::string::npos) continue;
    ++bookkeeping;
    EXPECT_EQ(g.fix.find("<built-in"), std::string::npos) << g.fix;
    EXPECT_NE(g.fix.find("torch/autograd/profiler.py(860): __exit__"), std::string::npos) << g.fix;
    EXPECT_EQ(g.fix.find("off the step path"), std::string::npos) << g.fix;
  }
  EXPECT_GT(bookkeeping, 0u);
}

}  // namespace
