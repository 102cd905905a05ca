// One answer to "is this op a convolution" (is_convolution_op) for gpu_idle's causes of slow
// ops, layout_conversion and the op categories. Three tests disagreed at the edges: the
// categories took "convolution" and an "aten::conv" prefix (not aten::thnn_conv2d), gpu_idle
// "conv" before "olution", a dimension or "_transpose" (not aten::conv_tbc,
// aten::_conv_depthwise2d), layout_conversion only "convolution" (not aten::conv2d). Names from
// PyTorch 1.13's operator schemas (torch._C._jit_get_all_schemas()), the grad_fn names its
// autograd gives them, and tests/data's traces.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "suite_support.hpp"
#include "ttap/analyze.hpp"
#include "ttap/convolution_ops.hpp"
#include "ttap/load.hpp"

namespace {

TEST(ConvolutionOp, PyTorchsConvolutionsForwardAndBackward) {
  for (const char* op :
       {"aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::conv_tbc", "aten::conv_tbc_backward",
        "aten::conv_transpose1d", "aten::conv_transpose2d", "aten::conv_transpose3d", "aten::_conv_depthwise2d",
        "aten::conv_depthwise3d", "aten::convolution", "aten::_convolution", "aten::convolution_overrideable",
        "aten::convolution_backward", "aten::convolution_backward_overrideable", "aten::_convolution_double_backward",
        "aten::cudnn_convolution", "aten::cudnn_convolution_transpose", "aten::cudnn_convolution_add_relu",
        "aten::miopen_convolution", "aten::miopen_depthwise_convolution", "aten::mkldnn_convolution",
        "aten::_nnpack_spatial_convolution", "aten::thnn_conv2d", "aten::_slow_conv2d_forward",
        "aten::_slow_conv2d_backward", "aten::slow_conv3d", "aten::slow_conv_dilated2d", "aten::slow_conv_transpose2d",
        "quantized::conv2d", "quantized::conv_transpose2d_dynamic", "_quantized::conv2d_relu",
        "prepacked::conv2d_clamp_run", "mkldnn_prepacked::conv2d_run",
        // Autograd's nodes (the older CudnnConvolutionBackward on kineto_resnet50_v100) and the
        // engine's call of one, which gpu_idle names as the outermost op of a backward.
        "ConvolutionBackward0", "CudnnConvolutionBackward", "ConvTbcBackward0", "SlowConv2DBackward0",
        "SlowConvDilated2DBackward0", "SlowConvTranspose2DBackward0", "MkldnnConvolutionBackward0",
        "autograd::engine::evaluate_function: ConvolutionBackward0"})
    EXPECT_TRUE(ttap::is_convolution_op(op)) << op;
  EXPECT_EQ(ttap::categorize_op("aten::conv_tbc"), ttap::OpCategory::CONV_fwd);
  EXPECT_EQ(ttap::categorize_op("aten::conv_tbc_backward"), ttap::OpCategory::CONV_bwd);
}

// Names holding "conv" where no convolution runs: weights packed, unpacked or reordered for a
// backend, a packed weight's parameters read back, conversions, and fb::convex_sum
// (hta_sampled_rank0).
TEST(ConvolutionOp, NamesThatOnlyHoldConv) {
  for (const char* op :
       {"quantized::conv2d_prepack", "quantized::conv2d_unpack", "quantized::conv_transpose2d_prepack",
        "quantized::conv2d_unpack_sizes", "_quantized::conv2d_prepack", "prepacked::conv2d_clamp_prepack",
        "prepacked::unpack_prepacked_sizes_conv2d", "mkldnn_prepacked::conv2d_prepack",
        "aten::mkldnn_reorder_conv2d_weight", "aten::mkldnn_reorder_conv3d_weight", "quantized::conv2d_stride",
        "quantized::conv2d_output_padding", "quantized::conv3d_groups", "quantized::conv2d_transpose",
        "quantized::conv_transpose2d_transpose", "aten::_convert_indices_from_coo_to_csr",
        "prims::convert_element_type", "fb::convex_sum"})
    EXPECT_FALSE(ttap::is_convolution_op(op)) << op;
  EXPECT_EQ(ttap::categorize_op("aten::_convert_indices_from_coo_to_csr"), ttap::OpCategory::other);
  EXPECT_EQ(ttap::categorize_op("fb::convex_sum"), ttap::OpCategory::other);
}

// Each CPU op of a trace whose name holds "conv" or "Conv", counted by whether it is a
// convolution and by its category.
std::map<std::pair<bool, ttap::OpCategory>, int> conv_named_ops(const std::string& trace_name) {
  const ttap::Trace t = ttap::load_trace(ttap::suite::data_path(trace_name));
  std::map<std::pair<bool, ttap::OpCategory>, int> n;
  for (ttap::EventId e = 0; e < t.size(); ++e) {
    const std::string_view name = t.name_of(e);
    if (t.category[e] == ttap::Category::CpuOp && (name.find("conv") != name.npos || name.find("Conv") != name.npos))
      ++n[{ttap::is_convolution_op(name), ttap::categorize_op(name)}];
  }
  return n;
}

// A CPU training step: aten::conv2d, aten::convolution, aten::_convolution (156 each) over
// 38 aten::mkldnn_convolution and 118 aten::thnn_conv2d -> aten::_slow_conv2d_forward; 150
// engine calls of ConvolutionBackward0 -> aten::convolution_backward, 118 of them over
// aten::_slow_conv2d_backward. All are convolutions. The categories keep the slow path and
// autograd's nodes `other`, as the detector learned them (categories.cpp).
TEST(ConvolutionOp, EveryConvolutionOfACpuTrainingStep) {
  using ttap::OpCategory;
  const auto n = conv_named_ops("cpu_zoo/zoo_0245_fasterrcnn_mobilenet_v3_large_fpn_train.json.gz");
  const std::map<std::pair<bool, OpCategory>, int> expected = {
      {{true, OpCategory::CONV_fwd}, 3 * 156 + 38}, {{true, OpCategory::CONV_bwd}, 150}, {{true, OpCategory::other}, 3 * 118 + 2 * 150}};
  EXPECT_EQ(n, expected);
}

TEST(ConvolutionOp, ConvexSumIsNone) {
  const std::map<std::pair<bool, ttap::OpCategory>, int> expected = {{{false, ttap::OpCategory::other}, 2}};
  EXPECT_EQ(conv_named_ops("hta_sampled_rank0.json.gz"), expected);
}

}  // namespace
