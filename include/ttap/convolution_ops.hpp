// Which ops are convolutions, by name: the one answer gpu_idle's causes of slow ops,
// layout_conversion and the op categories ask for (CONV_fwd and CONV_bwd are the part of it the
// detector learned as such, categories.cpp).
#pragma once

#include <string_view>

namespace ttap {

// Whether an op computes a convolution, forward or backward: PyTorch's convolution operators
// (aten::conv2d, conv_tbc, conv_transpose2d, _conv_depthwise2d, [_]convolution*, the cudnn_,
// miopen_ and mkldnn_ backends, thnn_conv2d, slow_conv*, _slow_conv2d_*), quantized::conv2d
// and its kin, autograd's nodes (ConvolutionBackward0, SlowConv2DBackward0) and the engine's
// calls of them. Not an op that packs, reorders or reads back a convolution's weights
// (quantized::conv2d_prepack, aten::mkldnn_reorder_conv2d_weight, quantized::conv2d_stride),
// nor one whose name only holds "conv" (fb::convex_sum, aten::_convert_indices_from_coo_to_csr).
bool is_convolution_op(std::string_view op_name);

}  // namespace ttap
