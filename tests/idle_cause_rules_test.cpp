// What the host was doing in the GPU idle gaps the specific patterns do not explain (issue 12
// item 1: "for its GPU idle gaps, what the host was doing then"). gpu_idle said only "no
// specific pattern explains" of gaps of 200 us and more, and launch_bound stopped at 200 us, so
// eager dispatch got two names by gap length. Fixtures: the GPU zoo's dev recordings in
// tests/data/gpu_zoo/ (scripts/dataset/make_gpu_zoo.py --seed 2026 on an H200).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;
using ttap::rules_support::ns_of;


// The parts of a "the host in those gaps: A; B; ..." line, in ns, summed.
int64_t parts_sum(const std::string& line, size_t* parts) {
  static const std::regex part(R"((?:: |; )([0-9.]+) (ns|us|ms|s) )");
  int64_t sum = 0;
  for (std::sregex_iterator it(line.begin(), line.end(), part), stop; it != stop; ++it) {
    sum += ns_of((*it)[1], (*it)[2]);
    ++*parts;
  }
  return sum;
}

const std::string* line_starting(const ttap::RuleFinding& f, const std::string& head) {
  for (const std::string& e : f.evidence)
    if (e.rfind(head, 0) == 0) return &e;
  return nullptr;
}

// Where [b, e) lies: whether in GPU activity, the length of the GPU idle gap around it, and
// whether one CPU op holds it.
struct Place {
  bool gpu_busy = false;
  int64_t gap = 0;
  bool in_op = false;
};
Place place_of(const ttap::Trace& t, int64_t b, int64_t e) {
  Place p;
  int64_t before = INT64_MIN, after = INT64_MAX;
  for (ttap::EventId i = 0; i < t.size(); ++i) {
    if (t.phase[i] != ttap::Phase::Complete) continue;
    if (ttap::is_gpu_activity(t.category[i])) {
      if (t.ts[i] < e && t.end(i) > b) p.gpu_busy = true;
      if (t.end(i) <= b) before = std::max(before, t.end(i));
      if (t.ts[i] >= e) after = std::min(after, t.ts[i]);
    }
    if (t.category[i] == ttap::Category::CpuOp && t.ts[i] <= b && t.end(i) >= e) p.in_op = true;
  }
  p.gap = before == INT64_MIN || after == INT64_MAX ? 0 : after - before;
  return p;
}

// gpuzoo_0032, ResNet-18 inference at batch 8 on an H200 (a good run: the GPU busy 1.3 ms of a
// 25.9 ms span): between kernels the host spends 150-300 us dispatching each convolution and
// batch norm. In gaps of 200 us or more that read gpu_idle ("no specific pattern explains");
// the host time spent there in ops that launch is launch_bound's, said so, and no part of it
// lies where the GPU works or outside an op.
TEST(IdleCauseRules, EagerDispatchInLongGapsIsLaunchBound) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("gpu_zoo/gpuzoo_0032_resnet18_inference.json.gz"));
  size_t windows = 0;
  for (auto [b, e] : l.windows) {
    const std::vector<ttap::RuleFinding> found = l.engine->detect(b, e);
    const ttap::RuleFinding* lb = ttap::rules_support::find_finding(found, "launch_bound");
    if (lb == nullptr) continue;
    const std::string* line = line_starting(*lb, "the host in the long gaps: ");
    if (line == nullptr) continue;
    ++windows;
    EXPECT_NE(line->find("dispatching ops that launch GPU work ("), std::string::npos) << *line;
    EXPECT_NE(line->find("aten::"), std::string::npos) << *line;
    size_t long_spans = 0;
    for (auto [sb, se] : lb->spans) {
      EXPECT_GE(sb, b);
      EXPECT_LE(se, e);
      const Place p = place_of(l.trace, sb, se);
      EXPECT_FALSE(p.gpu_busy) << "[" << sb << ", " << se << ")\n" << findings_text(found);
      if (p.gap < 200'000) continue;  // a short launch gap, launch_bound's before
      ++long_spans;
      EXPECT_TRUE(p.in_op) << "[" << sb << ", " << se << ")\n" << findings_text(found);
    }
    EXPECT_GE(long_spans, 1u) << findings_text(found);
    // Counted once: gpu_idle keeps none of that time.
    if (const ttap::RuleFinding* idle = ttap::rules_support::find_finding(found, "gpu_idle")) {
      for (auto [ib, ie] : idle->spans)
        for (auto [sb, se] : lb->spans) {
          EXPECT_TRUE(ie <= sb || se <= ib) << findings_text(found);
        }
    }
  }
  EXPECT_GE(windows, 5u);
}

// gpu_idle says what the host did in the gaps it keeps, in parts that add up to its cost: with
// nothing recorded, with work queued that the GPU had not started, in slow ops.
TEST(IdleCauseRules, GpuIdleSaysWhatTheHostDidInItsGapsToTheWholeCost) {
  size_t checked = 0;
  for (const char* trace : {"gpu_zoo/gpuzoo_0032_resnet18_inference.json.gz", "gpu_zoo/gpuzoo_0047_r3d_18_inference.json.gz",
                            "gpu_zoo/gpuzoo_0064_resnet18_train.json.gz", "gpu_zoo/gpuzoo_0014_depth_resnet18_unet_inference.json.gz"}) {
    const Loaded& l = ttap::rules_support::load(ttap::test::data(trace));
    for (auto [b, e] : l.windows) {
      const std::vector<ttap::RuleFinding> found = l.engine->detect(b, e);
      for (const ttap::RuleFinding& f : found) {
        if (f.id != "gpu_idle") continue;
        const std::string* line = line_starting(f, "the host in those gaps: ");
        ASSERT_NE(line, nullptr) << trace << "\n" << findings_text({f});
        size_t parts = 0;
        const int64_t sum = parts_sum(*line, &parts);
        EXPECT_GE(parts, 1u) << *line;
        // Each part is rounded when written: to whole microseconds from 10 us, to 10 us from 1 ms.
        EXPECT_NEAR(static_cast<double>(sum), static_cast<double>(f.cost),
                    0.006 * static_cast<double>(f.cost) + 501.0 * static_cast<double>(parts))
            << trace << "\n" << findings_text({f});
        // Dispatch left to gpu_idle only where launch_bound does not fire (too few kernels around).
        if (line->find("dispatching ops that launch GPU work") != std::string::npos) {
          EXPECT_EQ(ttap::rules_support::find_finding(found, "launch_bound"), nullptr) << findings_text(found);
        }
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 20u);
}

}  // namespace
