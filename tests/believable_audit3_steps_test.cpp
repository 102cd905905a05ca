// Findings a user can believe (issue 12, item 0), audit of the ninth round: a group names
// every step its occurrences run through. gpuzoo_0032 (ResNet-18 inference, nothing
// injected; the GPU busy 1.3 ms of 25.9 ms) has 67 idle gaps of at least 200 us, 23.3 ms in
// all, closer together than a twentieth of a step, so they are one stretch from +1.98 to
// +26.69 ms across both profiled steps; its gpu_idle group read "1 occurrence in step 2" beside
// "costs ~11.6 ms per step", the idle of both steps, as the steps were taken from where each
// stretch starts.
#include <gtest/gtest.h>

#include <algorithm>

#include "rules_support.hpp"
#include "suite_support.hpp"

namespace {

using namespace ttap;

TEST(BelievableAudit3Steps, AGroupNamesEveryStepItsOccurrencesRunThrough) {
  for (const char* name : {"gpu_zoo/gpuzoo_0032_resnet18_inference.json.gz", "tracelens_resnet_ckpt_mi300.json.gz"}) {
    const rules_support::Loaded& l = rules_support::load(suite::data_path(name));
    const TraceReport r = rules_support::analyze_default_windows(l);
    size_t across = 0;
    for (const GroupedFinding& g : r.findings)
      for (const Occurrence& o : g.occurrences)
        for (const Step& st : l.tree.steps()) {
          if (!(st.ts < o.end && o.begin < st.end)) continue;
          across += st.number != o.step;
          EXPECT_NE(std::find(g.steps.begin(), g.steps.end(), st.number), g.steps.end())
              << name << ": " << g.id << " in " << g.origin << " runs through step " << st.number;
        }
    EXPECT_GT(across, 0u) << name;  // some stretch runs past the step it starts in
  }
}

}  // namespace
