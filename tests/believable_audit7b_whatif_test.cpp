// The headline's what-ifs must not contradict the findings (audit7b): gpuzoo_0019 (ViT-B/16
// inference whose step moves a 9.0 MB tensor to the host and back, pageable both ways) read
// "what-if pageable_memcpy: pin host memory and copy with non_blocking=True would save ~8.89
// ms per step (27.4%)" beside its offload_pingpong finding, whose fix is to keep the tensor on
// the GPU. Copies that go out and come back are not counted by the pinned-copy what-if; a
// pageable upload that does not come back still is (the controlled pair's nw0).
// Fixtures: tests/data/gpu_zoo/ (scripts/dataset/make_gpu_zoo.py on an H200), kineto nw0.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "rules_support.hpp"
#include "suite_support.hpp"

namespace {

using namespace ttap;

TraceReport analyze_rules(const std::string& path) { return rules_support::analyze_default_windows(rules_support::load(path)); }

bool has_saving(const TraceReport& r, const std::string& id) {
  return std::any_of(r.savings.begin(), r.savings.end(), [&](const Saving& s) { return s.id == id; });
}

TEST(WhatIfAgreesWithFindings, RoundTripCopiesAreNotOfferedPinning) {
  const TraceReport r = analyze_rules(suite::data_path("gpu_zoo/gpuzoo_0019_vit_b_16_inference.json.gz"));
  ASSERT_TRUE(std::any_of(r.findings.begin(), r.findings.end(), [](const GroupedFinding& g) { return g.id == "offload_pingpong"; }));
  EXPECT_FALSE(has_saving(r, "pageable_memcpy")) << "its pageable copies are all the round trip's";
  EXPECT_TRUE(has_saving(r, "dataloader_stall"));
}

TEST(WhatIfAgreesWithFindings, OneWayPageableUploadsKeepThePinnedWhatIf) {
  const TraceReport r = analyze_rules(suite::data_path("kineto_resnet50_v100_nw0.json.gz"));
  EXPECT_TRUE(has_saving(r, "pageable_memcpy"));
}

}  // namespace
