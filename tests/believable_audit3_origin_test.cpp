// Findings a user can believe (issue 12, item 0), audit of the ninth round: a group is named
// after code the user can find. gpuzoo_0023's cpu_bound_step group read "in <built-in method
// of pybind11_builtins.pybind11_detail_function_record_v1_..._abi_1 object>": stable since the
// eighth round dropped the address, but it names no function. The call is the profiler's
// record_function exit (torch/autograd/profiler.py(860): __exit__ -> torch/_ops.py(1079):
// __call__ -> the built-in, 315 us), so the group now carries that frame's name; the same for
// vLLM's "<built-in method capture_end of ...>" under torch/cuda/graphs.py's capture_end.
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "suite_support.hpp"

namespace {

using namespace ttap;

TEST(BelievableAudit3Origin, ABuiltInCallIsNamedAfterTheFrameThatMadeIt) {
  const TraceReport r = rules_support::analyze_all_windows(
      rules_support::load(suite::data_path("gpu_zoo/gpuzoo_0023_ssdlite320_mobilenet_v3_large_train.json.gz")));
  bool exit_frame = false;
  for (const GroupedFinding& g : r.findings) {
    EXPECT_FALSE(g.origin.starts_with("<built-in")) << g.id << " in " << g.origin;
    EXPECT_FALSE(g.origin.starts_with("torch/_ops.py(")) << g.id << " in " << g.origin;
    exit_frame |= g.id == "cpu_bound_step" && g.origin == "torch/autograd/profiler.py(860): __exit__";
  }
  EXPECT_TRUE(exit_frame);  // the group is still there, named by the frame above the built-in
}

}  // namespace
