// Which ops are convolutions. The names come from PyTorch's operator schemas
// (native_functions.yaml, quantized and prepacked ops) and the grad_fn names its autograd
// gives them; tests/convolution_op_test.cpp lists both sides of each edge.
#include "ttap/convolution_ops.hpp"

#include <cctype>

namespace ttap {

namespace {

// Whether `s` begins with `word` (in lower case), whatever the case of `s`: the operator
// aten::conv_transpose2d and the autograd node SlowConvTranspose2DBackward0.
bool starts_with_word(std::string_view s, std::string_view word) {
  if (s.size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != word[i]) return false;
  return true;
}

}  // namespace

bool is_convolution_op(std::string_view op_name) {
  const size_t ns = op_name.rfind("::");
  const std::string_view name = ns == std::string_view::npos ? op_name : op_name.substr(ns + 2);
  // A convolution's weights packed, unpacked or reordered for a backend, or one of a packed
  // weight's parameters read back (quantized::conv2d_stride; quantized::conv2d_transpose says
  // whether it is a transposed one): no convolution runs.
  for (std::string_view p : {"prepack", "unpack", "reorder"})
    if (name.find(p) != std::string_view::npos) return false;
  if (op_name.find("quantized::") != std::string_view::npos)
    for (std::string_view p : {"_stride", "_padding", "_dilation", "_groups", "d_transpose"})
      if (name.ends_with(p)) return false;
  // "conv" and then "olution", a dimension or a variant's word, with or without "_" between:
  // conv2d, thnn_conv2d, conv_tbc, _conv_depthwise2d, slow_conv_dilated2d, SlowConvTranspose2D.
  for (size_t at = 0; at + 4 <= name.size(); ++at) {
    if (!starts_with_word(name.substr(at), "conv")) continue;
    std::string_view rest = name.substr(at + 4);
    if (starts_with_word(rest, "olution")) return true;
    if (rest.starts_with("_")) rest.remove_prefix(1);
    if ((!rest.empty() && rest[0] >= '1' && rest[0] <= '3') || starts_with_word(rest, "transpose") ||
        starts_with_word(rest, "tbc") || starts_with_word(rest, "depthwise") || starts_with_word(rest, "dilated"))
      return true;
  }
  return false;
}

}  // namespace ttap
