// `ttap collectives` on the 8 ranks of the PARAM DLRM job (V100, NCCL). Expected figures
// from Python over the JSON: per type, the i-th NCCL kernel of every rank aligned;
// skew = max start - min start, transfer = min end - max start.
//   sendrecv: 5 calls, mean skew 1910.4 us, mean transfer 7.2 us, last to arrive 7,7,7,7,5
//   allreduce: 3 calls, mean skew 564.0 us, mean transfer 54.0 us, last to arrive 7,5,4
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "ttap/collectives.hpp"
#include "ttap/load.hpp"

namespace {

TEST(Collectives, DlrmEightRanks) {
  std::vector<ttap::Trace> traces;
  std::vector<ttap::EventTree> trees;
  for (int r = 0; r < 8; ++r) traces.push_back(ttap::load_trace(ttap::test::data("param_dlrm_v100_8ranks/rank" + std::to_string(r) + ".json.gz")));
  for (const auto& t : traces) trees.push_back(ttap::EventTree::build(t));
  std::vector<ttap::RankTrace> ranks;
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(traces[r].distributed.rank, r);
    ranks.push_back({traces[r].distributed.rank, &traces[r], &trees[r]});
  }
  const ttap::CollectiveReport rep = ttap::analyze_collectives(ranks);
  EXPECT_TRUE(rep.warnings.empty());
  ASSERT_EQ(rep.groups.size(), 2u);
  for (const auto& g : rep.groups) {
    EXPECT_EQ(g.ranks, 8);
    EXPECT_EQ(g.algorithm, g.type == "allreduce" ? "RING LL" : "RING SIMPLE");
    if (g.type == "sendrecv") {
      EXPECT_EQ(g.calls, 5);
      EXPECT_NEAR(g.mean_skew, 1910.4e3, 1);
      EXPECT_NEAR(g.mean_transfer, 7.2e3, 1);
    } else {
      EXPECT_EQ(g.type, "allreduce");
      EXPECT_EQ(g.calls, 3);
      EXPECT_NEAR(g.mean_skew, 564.0e3, 1);
      EXPECT_NEAR(g.mean_transfer, 54.0e3, 1);
    }
    EXPECT_EQ(g.bytes, -1) << "this 2023 trace has no record_param_comms sizes";
  }
  ASSERT_EQ(rep.ranks.size(), 8u);
  EXPECT_EQ(rep.ranks[0].rank, 7);  // the straggler: last to arrive 5 times of 8
  EXPECT_EQ(rep.ranks[0].last_arrivals, 5);
}

TEST(Collectives, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(ttap::bus_bandwidth_factor("allreduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(ttap::bus_bandwidth_factor("allgather", 8), 0.875);
  EXPECT_DOUBLE_EQ(ttap::bus_bandwidth_factor("broadcast", 8), 1.0);
}

TEST(Collectives, SizesFromRecordParamComms) {
  // The DDP A100 trace (rank 0 of 2) carries Collective name, dtype and nelems on the
  // record_param_comms ops above its NCCL kernels.
  const ttap::Trace t = ttap::load_trace(ttap::test::data("hta_ddp_a100_nccl.json.gz"));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  const auto calls = ttap::collective_calls(t, tree);
  ASSERT_FALSE(calls.empty());
  size_t sized = 0;
  for (const auto& c : calls) {
    if (c.bytes > 0) {
      ++sized;
      EXPECT_EQ(c.group_size, 2);
      EXPECT_EQ(c.bytes % 4, 0) << "float elements";
    }
  }
  EXPECT_GT(sized, 0u);
}

TEST(Collectives, Cli) {
  const auto r = ttap::test::run_ttap("collectives " + ttap::test::data("param_dlrm_v100_8ranks"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("8 ranks"), std::string::npos);
  EXPECT_NE(r.out.find("sendrecv"), std::string::npos);
  EXPECT_EQ(ttap::test::run_ttap("collectives " + ttap::test::data("hta_cpu_only.json.gz")).exit_code, 2);
}

}  // namespace
