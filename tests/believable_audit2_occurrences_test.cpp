// Findings a user can believe (issue 12, item 0), audit of the eighth round: a grouped
// finding's cost lies within the occurrences it lists, on the GPU zoo's recordings too
// (believable_occurrences_test.cpp checks the public traces). pageable_memcpy costs the
// host's time in the calls that issue the copies (`.to(device)` and its wait), and listed
// the copies' own GPU time: gpuzoo_0047 "2 occurrences ... +2.354 ms .. +2.371 ms, +14.913 ms
// .. +14.930 ms" (34 us) for a cost of 629 us. offload_pingpong costs the copies' time and the
// GPU idle while the host issues them and waits, and listed the copies alone: gpuzoo_0058
// 136.9 ms over 127.2 ms listed, gpuzoo_0019 43.1 ms over 37.1 ms.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../src/classify/classify.hpp"
#include "rules_support.hpp"
#include "suite_support.hpp"

namespace {

using namespace ttap;

// The groups of `id` checked; each's cost within what its occurrences list.
size_t expect_cost_within_occurrences(const std::string& name, const std::string& id) {
  return rules_support::expect_cost_within_occurrences(
      rules_support::analyze_all_windows(rules_support::load(suite::data_path(name))), name, id);
}

TEST(BelievableAudit2Occurrences, PageableCopiesListWhereTheHostWaits) {
  EXPECT_GT(expect_cost_within_occurrences("gpu_zoo/gpuzoo_0047_r3d_18_inference.json.gz", "pageable_memcpy"), 0u);
  EXPECT_GT(expect_cost_within_occurrences("gpu_zoo/gpuzoo_0014_depth_resnet18_unet_inference.json.gz",
                                           "pageable_memcpy"),
            0u);
}

TEST(BelievableAudit2Occurrences, RoundTripsListTheirIdleToo) {
  for (const char* name : {"gpu_zoo/gpuzoo_0058_maskrcnn_resnet50_fpn_train.json.gz",
                           "gpu_zoo/gpuzoo_0019_vit_b_16_inference.json.gz",
                           "gpu_zoo/gpuzoo_0055_ssdlite320_mobilenet_v3_large_inference.json.gz"})
    EXPECT_GT(expect_cost_within_occurrences(name, "offload_pingpong"), 0u) << name;
}

}  // namespace
