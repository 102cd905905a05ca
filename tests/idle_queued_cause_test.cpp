// What the trace can say of GPU idle that gpu_idle keeps (issue 12 item 1, the rules' eleventh
// round): work the host had launched that the GPU did not start, and the host waiting while the
// driver loads a kernel's module on its first call. Fixtures: the GPU zoo's dev recordings in
// tests/data/gpu_zoo/ (scripts/dataset/make_gpu_zoo.py --seed 2026 on an H200, several runs at a
// time on the one GPU).
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "../src/rules/rule_index.hpp"
#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

int64_t ns_of(const std::string& number, const std::string& unit) {
  const double v = std::strtod(number.c_str(), nullptr);
  return static_cast<int64_t>(v * (unit == "ms" ? 1e6 : unit == "us" ? 1e3 : unit == "s" ? 1e9 : 1.0));
}

const std::string* line_starting(const ttap::RuleFinding& f, const std::string& head) {
  for (const std::string& e : f.evidence)
    if (e.rfind(head, 0) == 0) return &e;
  return nullptr;
}

// gpuzoo_0032, ResNet-18 inference at batch 8 (a good run): its kernels wait 250-320 us after
// their launch calls returned with no kernel of the trace running (the run shared the GPU with
// others). gpu_idle said only "work already launched and queued that the GPU had not started"
// and gave the host-side fix ("look at the CPU side of these gaps"). It now gives how long the
// work waited against how fast an idle GPU starts a launch in the same trace, says that nothing
// the trace records held it, and where that is most of the idle its fix is about the GPU being
// shared, not the host.
TEST(IdleQueuedCause, QueuedWorkSaysHowLongItWaitedAndThatTheTraceHoldsNoCause) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("gpu_zoo/gpuzoo_0032_resnet18_inference.json.gz"));
  const ttap::rules::RuleIndex ix(l.trace, l.tree);
  static const std::regex waits(
      R"(with work already launched and queued that the GPU had not started \((\d+) waits?, (?:median )?([0-9.]+) (us|ms) from the first launch call's return to the GPU's start, where an idle GPU starts a launch ([0-9.]+) (us|ms) after its call in this trace\), no GPU work of this trace running meanwhile: nothing it records held that work)");
  size_t lines = 0, queued_most = 0, long_waits = 0;
  for (auto [b, e] : l.windows) {
    const std::vector<ttap::RuleFinding> found = l.engine->detect(b, e);
    const ttap::RuleFinding* idle = ttap::rules_support::find_finding(found, "gpu_idle");
    if (idle == nullptr) continue;
    const std::string* line = line_starting(*idle, "the host in those gaps: ");
    ASSERT_NE(line, nullptr) << findings_text(found);
    if (line->find("queued that the GPU had not started") == std::string::npos) continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(*line, m, waits)) << *line;
    ++lines;
    const int64_t wait = ns_of(m[2], m[3]), latency = ns_of(m[4], m[5]);
    // The trace's own idle-queue latency, as written.
    EXPECT_NEAR(static_cast<double>(latency), static_cast<double>(ix.launch_latency), 600.0) << *line;
    // Counted only past that latency plus slack; most waits are five times it and more.
    EXPECT_GT(wait, ix.launch_latency + ttap::rules::kEmptyQueueSlack) << *line;
    long_waits += wait >= 5 * ix.launch_latency;
    // The whole device idle through each of the finding's pieces: no GPU activity of the trace.
    for (auto [sb, se] : idle->spans) {
      auto [k, kend] = ix.gpu_range(sb - ix.gpu_max_dur, se);
      for (; k < kend; ++k) {
        const ttap::EventId g = ix.gpu[k];
        if (!ix.on_primary(g)) continue;
        EXPECT_FALSE(l.trace.ts[g] < se && l.trace.end(g) > sb) << "[" << sb << ", " << se << ")";
      }
    }
    // The queued part is written first when it is the largest; then its fix is the shared GPU's.
    const int64_t part = [&] {
      static const std::regex first(R"(^the host in those gaps: ([0-9.]+) (us|ms) with work already launched)");
      std::smatch f;
      return std::regex_search(*line, f, first) ? ns_of(f[1], f[2]) : 0;
    }();
    if (2 * part > idle->cost + 2'000) {
      ++queued_most;
      EXPECT_NE(idle->fix.find("nvidia-smi"), std::string::npos) << idle->fix;
      EXPECT_NE(idle->fix.find("MIG instance"), std::string::npos) << idle->fix;
      EXPECT_EQ(idle->fix.find("look at the CPU side"), std::string::npos) << idle->fix;
    }
  }
  EXPECT_GE(lines, 10u);
  EXPECT_GE(10 * long_waits, 9 * lines);
  EXPECT_GE(queued_most, 5u);
}

// gpuzoo_0042, Mask R-CNN training: in its first profiled step CUPTI records "Runtime Triggered
// Module Loading" for 15.4 ms while the autograd thread sits in ConvolutionBackward0's
// cudaFuncGetAttributes and the GPU idles (lazy module loading on a kernel's first call). The
// gap's host time was "in slow ops" (a 22.9 ms op, one launch); it is now the module load's, and
// the line names the trace's records.
TEST(IdleQueuedCause, LazyModuleLoadingIsNamedInsteadOfASlowOp) {
  const Loaded& l = ttap::rules_support::load(ttap::test::data("gpu_zoo/gpuzoo_0042_maskrcnn_resnet50_fpn_train.json.gz"));
  const ttap::rules::RuleIndex ix(l.trace, l.tree);
  ASSERT_GE(ix.module_loads.events.size(), 2u);
  size_t checked = 0;
  for (ttap::EventId m : ix.module_loads.events) {
    if (l.trace.dur[m] < 10'000'000) continue;  // the long loads, each inside one long gap
    const std::vector<ttap::rules::Interval> gaps = ix.whole_idle_gaps(l.trace.ts[m], l.trace.end(m));
    ASSERT_EQ(gaps.size(), 1u) << l.trace.name_of(m);
    const auto gap = gaps[0];
    const ttap::rules::IdleParts p = ttap::rules::idle_parts(ix, gap, gap.first, gap.second);
    const int64_t load = ttap::rules::overlap(l.trace.ts[m], l.trace.end(m), gap.first, gap.second);
    EXPECT_GE(p.loading, load) << l.trace.name_of(m);
    EXPECT_GT(p.loading, 2 * p.long_ops) << "loading " << p.loading << " slow ops " << p.long_ops;
    const std::string text = ttap::rules::idle_parts_text(ix, p);
    EXPECT_NE(text.find("in lazy CUDA module loading on a kernel's first call (the trace's \"Runtime Triggered Module "
                        "Loading\""),
              std::string::npos)
        << text;
    const std::string fix = ttap::rules::idle_parts_fix(p, gap.second - gap.first);
    EXPECT_NE(fix.find("CUDA_MODULE_LOADING=EAGER"), std::string::npos) << fix;
    ++checked;
  }
  EXPECT_GE(checked, 2u);
}

}  // namespace
