// `ttap tree --modules` on the ViT trace: GPU time by nn.Module. The total is the
// trace's computation time in TraceLens's golden gpu_timeline (1.2253 ms, 156 kernels);
// the encoder's 12 ViTLayers launch 12 kernels each (144).
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "ttap/load.hpp"
#include "ttap/modules.hpp"

namespace {

TEST(ModuleView, VitHierarchy) {
  const ttap::Trace t = ttap::load_trace(ttap::test::data("tracelens_vit_nsfw_h100.json.gz"));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  const ttap::ModuleTree m = ttap::module_tree(t, tree);
  ASSERT_TRUE(m.has_modules);
  EXPECT_NEAR(static_cast<double>(m.total_gpu_time) / 1e6, 1.225309, 1e-5);
  EXPECT_EQ(m.nodes[0].kernels, 156);
  int64_t self_sum = 0;
  for (const auto& n : m.nodes) self_sum += n.self_time;
  EXPECT_EQ(self_sum, m.total_gpu_time);  // every ns is somewhere exactly once
  ASSERT_EQ(m.nodes[0].children.size(), 1u);
  const ttap::ModuleNode& model = m.nodes[m.nodes[0].children[0]];
  EXPECT_EQ(model.name, "ViTModel_0");
  EXPECT_EQ(model.gpu_time, m.total_gpu_time);
  const ttap::ModuleNode& encoder = m.nodes[model.children[0]];
  EXPECT_EQ(encoder.name, "ViTEncoder_0");
  EXPECT_EQ(encoder.kernels, 144);
  EXPECT_EQ(encoder.children.size(), 12u);
  for (int32_t c : encoder.children) EXPECT_EQ(m.nodes[c].kernels, 12) << m.nodes[c].name;
}

TEST(ModuleView, Cli) {
  const auto r = ttap::test::run_ttap("tree --modules --depth 2 " + ttap::test::data("tracelens_vit_nsfw_h100.json.gz"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("(module) (all GPU work)  [1.225 ms GPU, 100.0%, 156 kernels", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\n    (module) ViTEncoder_0  [1.072 ms GPU, 87.5%, 144 kernels"), std::string::npos) << r.out;
  const auto none = ttap::test::run_ttap("tree --modules " + ttap::test::data("kineto_resnet50_v100_nw0.json.gz"));
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no nn.Module frames"), std::string::npos);
}

}  // namespace
