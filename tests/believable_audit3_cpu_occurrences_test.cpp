// Findings a user can believe (issue 12, item 0), audit of the ninth round: on CPU-only
// traces too a finding's cost lies within the occurrences it lists.
// - cpu_bound_step costs the stretches where the training thread records nothing, and listed
//   the two ops around the longest one: ttap-bench's good zoo_0002 (MobileNetV3-Small on the
//   CPU) "costs ~5.93 ms per step" (11.9 ms) over 3 occurrences of 4.45 ms, aten::linear and
//   the like (6.18 ms with the rules scorer).
// - cast_churn and redundant_copy keep 256 of their calls as events, and the rest of the
//   calls fell out of the occurrences: zoo_0008's casts across the steady state cost 306 ms
//   over 153 ms listed.
#include <gtest/gtest.h>

#include <string>

#include "../src/classify/classify.hpp"
#include "rules_support.hpp"
#include "suite_support.hpp"

namespace {

using namespace ttap;

// The groups of `id` whose occurrences are all listed; each's cost within them.
size_t expect_cost_within_occurrences(const std::string& name, const std::string& id) {
  const rules_support::Loaded& l = rules_support::load(suite::data_path(name));
  return rules_support::expect_cost_within_occurrences(rules_support::analyze_default_windows(l), name, id);
}

TEST(BelievableAudit3CpuOccurrences, QuietStretchesAreTheOccurrences) {
  EXPECT_GT(expect_cost_within_occurrences("cpu_zoo/zoo_0002_mobilenet_v3_small_inference.json.gz", "cpu_bound_step"), 0u);
}

TEST(BelievableAudit3CpuOccurrences, CallsPastTheKeptEventsStayListed) {
  EXPECT_GT(expect_cost_within_occurrences("cpu_zoo/zoo_0008_deeplabv3_mobilenet_v3_large_inference.json.gz", "cast_churn"),
            0u);
}

}  // namespace
