// Findings a user can believe (issue 12, item 0), audit of the seventh round: a fix names what
// acts on the collective the finding found. hta_sampled_rank0 is a DDP job (its trace holds
// DistributedDataParallel.forward) that also issues all-gathers and all-to-alls itself; its
// exposed all-gather read "let DDP overlap c10d::_allgather_base_ with the backward: lower
// bucket_cap_mb ...", though DDP's buckets issue only the gradients' all-reduce.
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using namespace ttap;

const GroupedFinding* grouped(const TraceReport& r, const std::string& id, const std::string& origin) {
  for (const GroupedFinding& g : r.findings)
    if (g.id == id && g.origin == origin) return &g;
  return nullptr;
}

TEST(BelievableAuditFix, AnAllGatherInADdpJobIsNotGivenDdpBucketAdvice) {
  const TraceReport r = rules_support::analyze_all_windows(rules_support::load(ttap::test::data("hta_sampled_rank0.json.gz")));
  const GroupedFinding* g = grouped(r, "comm_not_overlapped", "c10d::_allgather_base_");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->fix.find("bucket_cap_mb"), std::string::npos) << g->fix;
  EXPECT_NE(g->fix.find("overlap c10d::_allgather_base_ with compute"), std::string::npos) << g->fix;
}

TEST(BelievableAuditFix, DdpsOwnAllReduceKeepsTheBucketAdvice) {
  // hta_ddp_a100_nccl: the exposed collectives are DDP's gradient all-reduce.
  const TraceReport r = rules_support::analyze_all_windows(rules_support::load(ttap::test::data("hta_ddp_a100_nccl.json.gz")));
  size_t seen = 0;
  for (const GroupedFinding& g : r.findings)
    if (g.id == "comm_not_overlapped") {
      ++seen;
      EXPECT_NE(g.fix.find("bucket_cap_mb"), std::string::npos) << g.origin << ": " << g.fix;
    }
  EXPECT_GT(seen, 0u);
}

}  // namespace
