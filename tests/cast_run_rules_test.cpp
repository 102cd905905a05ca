// A run of dtype casts is cast_churn's, not a chain of elementwise ops to fuse (audit7: the GPU
// zoo's reports read as the job's author). A step that recasts every weight
// (`[p.detach().to(torch.float16) for p in model.parameters()]`, then back) launches its casts
// back to back on the stream, each an aten::copy_ of its own tensor under aten::to; the
// unfused_elementwise rule took them for a chain ("115 kernels ...: aten::copy_ -> aten::copy_
// -> ...") and told the author to "fuse the chain aten::copy_ -> aten::copy_ -> ... with
// torch.compile (or a fused kernel: fused norms/activations, fused AdamW)". Fixtures:
// tests/data/gpu_zoo/ (scripts/dataset/make_gpu_zoo.py on an H200).
#include <gtest/gtest.h>

#include <string>

#include "rules_support.hpp"
#include "test_util.hpp"

namespace {

using ttap::rules_support::find_finding;
using ttap::rules_support::findings_text;
using ttap::rules_support::Loaded;

const Loaded& zoo(const std::string& name) { return ttap::rules_support::load(ttap::test::data("gpu_zoo/" + name)); }

// gpuzoo_0003, ViT-B/16 training with cast_churn injected: the three windows analyze flags in
// the recast loop (1.19 ms each) hold the cast loop alone. cast_churn names it; no chain is
// reported beside it.
TEST(CastRunRules, ARunOfCastsIsNotAnElementwiseChain) {
  const Loaded& l = zoo("gpuzoo_0003_vit_b_16_train.json.gz");
  for (auto [b, e] : {std::pair<int64_t, int64_t>{4690838631936868, 4690838633123535},
                      std::pair<int64_t, int64_t>{4690838671096889, 4690838672283556},
                      std::pair<int64_t, int64_t>{4690838592776846, 4690838593963514}}) {
    const auto found = l.engine->detect(b, e);
    ASSERT_FALSE(found.empty());
    EXPECT_EQ(found.front().id, "cast_churn") << findings_text(found);
    EXPECT_EQ(find_finding(found, "unfused_elementwise"), nullptr) << findings_text(found);
  }
}

// A chain of arithmetic stays a chain: gpuzoo_0008's op-by-op jitter and normalization
// (`x * 1.1`, `+ 0.02`, clamp, ...; unfused_elementwise injected) is still found in its window.
TEST(CastRunRules, AChainOfArithmeticIsStillFound) {
  const Loaded& l = zoo("gpuzoo_0008_deeplabv3_mobilenet_v3_large_inference.json.gz");
  const auto found = l.engine->detect(4690848399396706, 4690848399707153);
  const ttap::RuleFinding* chain = find_finding(found, "unfused_elementwise");
  ASSERT_NE(chain, nullptr) << findings_text(found);
  EXPECT_NE(chain->evidence[1].find("aten::mul -> aten::add -> aten::sub"), std::string::npos) << findings_text(found);
}

}  // namespace
