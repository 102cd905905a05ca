// Findings a user can believe (issue 12, item 0), audit of the eighth round: comm_not_overlapped
// gives DDP's bucket advice only for an all-reduce, by the collective's type as `ttap
// collectives` reads it (collectives.cpp: the record_param_comms "Collective name", else the
// kernel's), where it matched the issuing op's name by substring. torchrec's embedding
// all-to-all (ncclKernel_SendRecv under a record_param_comms without a name; 164 ms of exposed
// SendRecv in hta_torchrec_a100_rank0) read "let DDP overlap record_param_comms with the
// backward: lower bucket_cap_mb", as did hta_sampled_rank1's SendRecv.
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"
#include "ttap/collectives.hpp"

namespace {

using namespace ttap;

TEST(BelievableAudit2CommType, OneClassifierNamesTheTypes) {
  EXPECT_EQ(collective_type("c10d::allreduce_"), "allreduce");
  EXPECT_EQ(collective_type("allreduce"), "allreduce");
  EXPECT_EQ(collective_type("c10d::_allgather_base_"), "allgather");
  EXPECT_EQ(collective_type("_reduce_scatter_base"), "reduce_scatter");
  EXPECT_EQ(collective_type("SendRecv"), "sendrecv");
  EXPECT_EQ(collective_type("c10d::gather_"), "c10d::gather");  // plain gather is no all-gather
  EXPECT_EQ(collective_type("broadcast"), "broadcast");
}

void expect_no_bucket_advice(const std::string& trace) {
  const TraceReport r = rules_support::analyze_all_windows(rules_support::load(ttap::test::data(trace)));
  size_t seen = 0;
  for (const GroupedFinding& g : r.findings)
    if (g.id == "comm_not_overlapped" && g.origin == "record_param_comms") {
      ++seen;
      EXPECT_EQ(g.fix.find("bucket_cap_mb"), std::string::npos) << g.fix;
      EXPECT_NE(g.fix.find("overlap record_param_comms with compute"), std::string::npos) << g.fix;
    }
  EXPECT_GT(seen, 0u) << trace;
}

TEST(BelievableAudit2CommType, TorchrecsAllToAllIsNotGivenDdpBucketAdvice) {
  expect_no_bucket_advice("hta_torchrec_a100_rank0.json.gz");
}

TEST(BelievableAudit2CommType, SendRecvInADdpJobIsNotGivenDdpBucketAdvice) {
  expect_no_bucket_advice("hta_sampled_rank1.json.gz");
}

}  // namespace
