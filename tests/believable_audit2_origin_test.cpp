// Findings a user can believe (issue 12, item 0), audit of the eighth round: a finding's
// origin names the same problem in every run. gpuzoo_0023's cpu_bound_step group read "in
// <built-in method  of pybind11_builtins.pybind11_detail_function_record_v1_..._abi_1 object at
// 0x7fe3f33f0b30>": the address changes with every process, so `--baseline` (which matches
// groups by id and origin) and SARIF's fingerprints (id, origin, trace) took the same problem
// in the next run for a new one. Origins keep the name without the address.
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "suite_support.hpp"

namespace {

using namespace ttap;

TEST(BelievableAudit2Origin, AnOriginHoldsNoMemoryAddress) {
  const TraceReport r = rules_support::analyze_all_windows(
      rules_support::load(suite::data_path("gpu_zoo/gpuzoo_0023_ssdlite320_mobilenet_v3_large_train.json.gz")));
  for (const GroupedFinding& g : r.findings)
    EXPECT_EQ(g.origin.find(" at 0x"), std::string::npos) << g.id << " in " << g.origin;
  // The built-in's group is now named after the frame above it (believable_audit3_origin_test).
}

}  // namespace
