// Roofline figures checked by hand (arithmetic in the comments).
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "ttap/load.hpp"
#include "ttap/roofline.hpp"

namespace {

TEST(Roofline, GemmByHand) {
  // addmm(bias[768], A[788,768], B[768,768]) in bf16: 2*788*768*768 = 929,562,624 FLOPs;
  // bytes (768 + 788*768 + 768*768 + 788*768 out) * 2 = 3,601,920.
  const auto c = ttap::op_cost("aten::addmm", "[[768],[788,768],[768,768],[],[]]",
                               R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"])", "");
  ASSERT_TRUE(c.known);
  EXPECT_DOUBLE_EQ(c.flops, 929562624.0);
  EXPECT_DOUBLE_EQ(c.bytes, 3601920.0);
  EXPECT_EQ(c.dtype, "bf16");
  // mm fp32 [64,128]x[128,32]: 2*64*32*128 = 524,288; (8192+4096+2048)*4 = 57,344 bytes.
  const auto mm = ttap::op_cost("aten::mm", "[[64,128],[128,32]]", R"(["float","float"])", "");
  EXPECT_DOUBLE_EQ(mm.flops, 524288.0);
  EXPECT_DOUBLE_EQ(mm.bytes, 57344.0);
  // bmm [8,16,32]x[8,32,4]: 2*8*16*4*32 = 32,768.
  EXPECT_DOUBLE_EQ(ttap::op_cost("aten::bmm", "[[8,16,32],[8,32,4]]", R"(["c10::Half","c10::Half"])", "").flops, 32768.0);
  // linear input [2,10,64], weight [32,64]: 2*20*32*64 = 81,920.
  EXPECT_DOUBLE_EQ(ttap::op_cost("aten::linear", "[[2,10,64],[32,64],[32]]", R"(["float","float","float"])", "").flops, 81920.0);
}

TEST(Roofline, ConvolutionAttentionElementwiseByHand) {
  // ViT patch embedding: [4,3,224,224] * [768,3,16,16], stride 16, padding 0 -> 14x14 out:
  // 2 * 4 * 768 * 196 * (3*16*16) = 924,844,032.
  const auto conv = ttap::op_cost("aten::cudnn_convolution", "[[4,3,224,224],[768,3,16,16],[],[],[],[],[],[],[]]",
                                  R"(["c10::BFloat16","c10::BFloat16","ScalarList","ScalarList","ScalarList","Scalar","Scalar","Scalar","Scalar"])",
                                  R"(["","","[0, 0]","[16, 16]","[1, 1]","1","False","False","True"])");
  ASSERT_TRUE(conv.known);
  EXPECT_DOUBLE_EQ(conv.flops, 924844032.0);
  // Without Concrete Inputs (2021 traces) the stride is unknown: no guess.
  EXPECT_FALSE(ttap::op_cost("aten::cudnn_convolution", "[[32,3,224,224],[64,3,7,7],[],[],[],[],[],[],[]]",
                             R"(["float","float"])", "").known);
  // Flash attention [B=4, L=197, H=12, D=64]: 4 * 4*12*197*197*64 = 476,884,992.
  const auto sdpa = ttap::op_cost("aten::_flash_attention_forward", "[[4,197,12,64],[4,197,12,64],[4,197,12,64]]",
                                  R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16"])", "");
  EXPECT_DOUBLE_EQ(sdpa.flops, 476884992.0);
  // add [4,197,768] + [4,197,768] in bf16: 605,184 FLOPs; 3 * 605,184 * 2 bytes.
  const auto add = ttap::op_cost("aten::add", "[[4,197,768],[4,197,768],[]]", R"(["c10::BFloat16","c10::BFloat16","Scalar"])", "");
  EXPECT_DOUBLE_EQ(add.flops, 605184.0);
  EXPECT_DOUBLE_EQ(add.bytes, 3631104.0);
  EXPECT_EQ(ttap::parse_dims("[[4,3],[],[[1,2],[3]],5]"), (std::vector<std::vector<int64_t>>{{4, 3}, {}, {}, {}}));
}

TEST(Roofline, RealTraceAgainstTheH100Table) {
  const ttap::Trace t = ttap::load_trace(ttap::test::data("tracelens_vit_nsfw_h100.json.gz"));
  const ttap::EventTree tree = ttap::EventTree::build(t);
  const ttap::Roofline r = ttap::roofline(t, tree);
  ASSERT_NE(r.device, nullptr);
  EXPECT_EQ(r.device->name, "H100");
  ASSERT_FALSE(r.rows.empty());
  const ttap::RooflineRow& top = r.rows[0];  // the 48 QKV/proj GEMMs, 399.136 us in all
  EXPECT_EQ(top.name, "aten::addmm");
  EXPECT_EQ(top.count, 48);
  EXPECT_EQ(top.kernel_time, 399136);
  // 929,562,624 FLOP / (399.136 us / 48) = 111.79 TFLOP/s; intensity 258.1 < ridge
  // 989.4/3.35 = 295.3: memory-bound, attainable 258.1 * 3.35 = 864.5 TFLOP/s.
  EXPECT_NEAR(top.achieved_tflops, 111.788, 0.01);
  EXPECT_FALSE(top.compute_bound);
  EXPECT_NEAR(top.roof_pct, 12.93, 0.02);
  for (const char* name : {"V100-SXM2", "A100-SXM4-80GB", "H100 80GB HBM3", "H200", "B200", "AMD Instinct MI300X", "RTX 2080 Ti"})
    EXPECT_NE(ttap::find_device_spec(name), nullptr) << name;
  EXPECT_DOUBLE_EQ(ttap::find_device_spec("NVIDIA A100-SXM4-80GB")->bandwidth, 2.039);
  EXPECT_DOUBLE_EQ(ttap::find_device_spec("NVIDIA A100-PG509-200")->bandwidth, 1.555);
}

}  // namespace
