// `ttap diff` on the controlled real pair: the same ResNet50 job with DataLoader
// num_workers=4 (base) and 0 (new). Expected step medians from Python over the JSON:
// median ProfilerStep#N dur = 126548.0 us (nw4) and 176273.0 us (nw0), +39.29% (the
// means, 139692.0 and 174829.3 us, carry nw4's warm-up step of 181.6 ms).
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "ttap/diff.hpp"
#include "ttap/load.hpp"

namespace {

using ttap::test::data;
using ttap::test::run_ttap;

struct Pair {
  ttap::Trace base, next;
  ttap::EventTree base_tree, next_tree;
};

Pair load(const char* base, const char* next) {
  Pair p;
  p.base = ttap::load_trace(data(base));
  p.next = ttap::load_trace(data(next));
  p.base_tree = ttap::EventTree::build(p.base);
  p.next_tree = ttap::EventTree::build(p.next);
  return p;
}

TEST(Diff, DataLoaderStallIsTheTopRegression) {
  const Pair p = load("kineto_resnet50_v100_nw4.json.gz", "kineto_resnet50_v100_nw0.json.gz");
  const ttap::TraceDiff d = ttap::diff_traces(p.base, p.base_tree, p.next, p.next_tree, {7.0});
  ASSERT_GE(d.gates.size(), 2u);
  EXPECT_EQ(d.gates[0].metric, "step time (median)");
  EXPECT_NEAR(d.gates[0].base, 126548.0e3, 1);
  EXPECT_NEAR(d.gates[0].next, 176273.0e3, 1);
  EXPECT_NEAR(d.gates[0].delta_pct, 39.29, 0.01);
  EXPECT_TRUE(d.gates[0].regressed);
  EXPECT_TRUE(d.regressed);
  EXPECT_EQ(d.steps.size(), 6u);
  ASSERT_FALSE(d.ops.empty());
  EXPECT_EQ(d.ops[0].key, "enumerate(DataLoader)#*.__next__");
  EXPECT_GT(d.ops[0].delta(), 300'000'000);  // ~+68 ms a step over 6 steps
  ASSERT_FALSE(d.tree.empty());
  EXPECT_EQ(d.tree[0].name, "enumerate(DataLoader)#*.__next__");
  EXPECT_EQ(d.tree[0].path, "ProfilerStep#*");
  ASSERT_FALSE(d.top_contributors.empty());
  EXPECT_NE(d.top_contributors[0].find("DataLoader"), std::string::npos) << d.top_contributors[0];
}

TEST(Diff, ImprovementAndIdentityPass) {
  const Pair better = load("kineto_resnet50_v100_nw0.json.gz", "kineto_resnet50_v100_nw4.json.gz");
  const auto d = ttap::diff_traces(better.base, better.base_tree, better.next, better.next_tree, {7.0});
  EXPECT_FALSE(d.regressed);
  EXPECT_LT(d.gates[0].delta_pct, -28.0);
  const Pair same = load("tracelens_vit_nsfw_h100.json.gz", "tracelens_vit_nsfw_h100.json.gz");
  const auto s = ttap::diff_traces(same.base, same.base_tree, same.next, same.next_tree, {0.0});
  EXPECT_FALSE(s.regressed);
  EXPECT_TRUE(s.tree.empty());
  for (const auto& r : s.kernels) EXPECT_EQ(r.delta(), 0) << r.key;
  for (const auto& g : s.gates) EXPECT_EQ(g.delta_pct, 0.0) << g.metric;
}

TEST(Diff, NormalizedNames) {
  EXPECT_EQ(ttap::normalized_op_name("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"),
            ttap::normalized_op_name("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"));
  EXPECT_EQ(ttap::normalized_op_name("ProfilerStep#12"), "ProfilerStep#*");
  EXPECT_EQ(ttap::normalized_op_name("aten::mm"), "aten::mm");
}

TEST(Diff, CliGatesWithExitCodes) {
  const std::string nw4 = data("kineto_resnet50_v100_nw4.json.gz"), nw0 = data("kineto_resnet50_v100_nw0.json.gz");
  const auto r = run_ttap("diff " + nw4 + " " + nw0);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("REGRESSION above 7%: step time (median) +39.3%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("top contributor: self time of ProfilerStep#* > enumerate(DataLoader)#*.__next__"), std::string::npos);
  EXPECT_EQ(run_ttap("diff --threshold 40% " + nw4 + " " + nw0).exit_code, 0);
  EXPECT_EQ(run_ttap("diff " + nw0 + " " + nw4).exit_code, 0);
  const auto json = run_ttap("diff --format json " + nw4 + " " + nw0);
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_NE(json.out.find("\"regressed\":true"), std::string::npos);
  EXPECT_EQ(run_ttap("diff --threshold abc " + nw4 + " " + nw0).exit_code, 2);
  EXPECT_EQ(run_ttap("diff " + nw4).exit_code, 2);
}

}  // namespace
