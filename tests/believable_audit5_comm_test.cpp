// Findings a user can believe (issue 12, item 0), audit of the eleventh round:
// comm_not_overlapped looked for the collectives exposed in a window among the kernels that
// START in it (RuleIndex::gpu_range). hta_sampled_rank0's window 58 lies inside one 67.8 ms
// ncclKernel_SendRecv that began before it: its group named no origin and no kernel ("collective
// kernels busy 12.3 ms in the range" and nothing else) and gave DDP's bucket advice for an
// embedding all-to-all; window 89 listed 662 us of its 8.90 ms exposed. The collectives running
// in the window are judged now (RuleIndex::gpu_overlapping), each by its exposed time inside it.
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using namespace ttap;

TEST(BelievableAudit5Comm, AWindowInsideOneLongCollectiveNamesIt) {
  const auto& l = rules_support::load(test::data("hta_sampled_rank0.json.gz"));
  // Window 58 of 100 (the one `ttap analyze` flags with the shipped detector).
  const auto [b, e] = l.windows[58];
  const auto findings = l.engine->detect(b, e);
  const RuleFinding* f = rules_support::find_finding(findings, "comm_not_overlapped");
  ASSERT_NE(f, nullptr) << rules_support::findings_text(findings);
  // All of the window's 12.3 ms exposed is that one SendRecv, not none of it.
  EXPECT_TRUE(rules_support::evidence_has(
      *f, "exposed: ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t 12.3 ms; issued by record_param_comms 12.3 ms"))
      << rules_support::findings_text(findings);
  // An embedding all-to-all (SendRecv) gets no DDP bucket advice.
  EXPECT_EQ(f->fix.find("bucket_cap_mb"), std::string::npos) << f->fix;
  EXPECT_EQ(finding_origin(*f, l.trace, l.tree), "record_param_comms");

  // Window 89 holds 8.24 ms of another SendRecv that began before it and the first 662 us of
  // a 63.6 ms all-gather: it is the SendRecv's (record_param_comms), by time inside it.
  const auto [b89, e89] = l.windows[89];
  const auto at89 = l.engine->detect(b89, e89);
  const RuleFinding* f89 = rules_support::find_finding(at89, "comm_not_overlapped");
  ASSERT_NE(f89, nullptr) << rules_support::findings_text(at89);
  EXPECT_TRUE(rules_support::evidence_has(*f89, "issued by record_param_comms 8.24 ms, c10d::_allgather_base_ 662 us"))
      << rules_support::findings_text(at89);
  EXPECT_EQ(finding_origin(*f89, l.trace, l.tree), "record_param_comms");

  // Grouped over every window: no group without an origin.
  const TraceReport r = rules_support::analyze_all_windows(l);
  size_t groups = 0;
  for (const GroupedFinding& g : r.findings)
    if (g.id == "comm_not_overlapped") {
      ++groups;
      EXPECT_FALSE(g.origin.empty()) << "a comm_not_overlapped group names no origin: " << g.evidence.front();
    }
  EXPECT_GT(groups, 0u);
}

// Every window the rules judge: no comm_not_overlapped finding without the collective it
// exposes, and its cost and extent inside the window (a collective running on past it shows
// there as the next window's).
TEST(BelievableAudit5Comm, EveryExposedWindowNamesItsCollectiveInsideTheWindow) {
  const auto& l = rules_support::load(test::data("hta_sampled_rank0.json.gz"));
  size_t seen = 0, inside_one = 0;
  for (auto [b, e] : l.windows) {
    const auto findings = l.engine->detect(b, e);
    const RuleFinding* f = rules_support::find_finding(findings, "comm_not_overlapped");
    if (f == nullptr) continue;
    ++seen;
    EXPECT_FALSE(f->events.empty()) << rules_support::findings_text(findings);
    EXPECT_TRUE(rules_support::evidence_has(*f, "exposed: ")) << rules_support::findings_text(findings);
    EXPECT_GE(f->begin, b);
    EXPECT_LE(f->end, e);
    EXPECT_LE(f->cost, e - b);
    // The range lies inside one collective that started before it and ends after it.
    for (EventId g : f->events)
      if (l.trace.ts[g] < b && l.trace.end(g) > e) ++inside_one;
  }
  EXPECT_GT(seen, 10u);
  EXPECT_GT(inside_one, 0u) << "no window inside one long collective: the case this test is for is gone";
}

}  // namespace

namespace {

// A window inside a collective whose launch the trace does not hold (hta_torchrec_a100_rank0's
// first SendRecv, running before the host record starts) named the kernel as its own issuer:
// "exposed: ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t 10.7 ms; issued by
// ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t 10.7 ms".
TEST(BelievableAudit5Comm, ACollectiveWithoutARecordedLaunchNamesNoIssuer) {
  const ttap::TraceReport r =
      ttap::rules_support::analyze_all_windows(ttap::rules_support::load(ttap::test::data("hta_torchrec_a100_rank0.json.gz")));
  size_t unlaunched = 0;
  for (const ttap::FlaggedWindow& w : r.flagged)
    for (const ttap::Finding& f : w.findings)
      for (const std::string& line : f.evidence) {
        if (f.id != "comm_not_overlapped" || !line.starts_with("exposed: ")) continue;
        EXPECT_EQ(line.find("issued by nccl"), std::string::npos) << line;
        unlaunched += line.find("its launch is not in the trace") != std::string::npos;
      }
  EXPECT_GT(unlaunched, 0u);
}

}  // namespace
