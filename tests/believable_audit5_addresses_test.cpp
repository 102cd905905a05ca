// Findings a user can believe (issue 12, item 0), audit of the eleventh round: evidence lines
// printed a pybind built-in's name with the object's memory address,
// tracelens_vllm_piecewise_capture's cpu_bound_step "6.7 us of that idle inside <built-in method
// _record_function_enter_new of pybind11_builtins...abi_1 object at 0x7f6078438030> (one 6.7 us
// call)". The address changes every run: users cannot read it, and a line that holds it matches
// no --baseline and no SARIF fingerprint of another run. The rules' lines drop it now, as the
// groups' origins already did (without_addresses, analyze.hpp).
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using namespace ttap;

TEST(BelievableAudit5Addresses, NoEvidenceLineOrFixPrintsAnAddress) {
  for (const char* name : {"tracelens_vllm_piecewise_capture.json.gz", "gpu_zoo/gpuzoo_0023_ssdlite320_mobilenet_v3_large_train.json.gz",
                           "rules_x/x_tracelens_vllm_piecewise_capture_04.json.gz"}) {
    SCOPED_TRACE(name);
    const TraceReport r = rules_support::analyze_all_windows(rules_support::load(test::data(name)));
    size_t built_ins = 0;
    auto check = [&](const std::string& line) {
      EXPECT_EQ(line.find(" at 0x"), std::string::npos) << line;
      built_ins += line.find("<built-in method") != std::string::npos;
    };
    for (const FlaggedWindow& w : r.flagged)
      for (const Finding& f : w.findings) {
        for (const std::string& line : f.evidence) check(line);
        check(f.fix);
      }
    for (const GroupedFinding& g : r.findings) {
      for (const std::string& line : g.evidence) check(line);
      check(g.fix);
    }
    EXPECT_GT(built_ins, 0u) << "no line names a built-in any more: the case this test is for is gone";
  }
}

}  // namespace
