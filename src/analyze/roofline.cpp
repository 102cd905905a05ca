// Roofline figures. FLOP counts follow the usual conventions: a multiply-add is 2 FLOPs;
// GEMM 2MNK; convolution 2 * N * K * prod(out) * C/groups * prod(kernel), backward 1x
// that per gradient computed; attention 4 * B * H * Lq * Lk * D forward (QK^T and PV),
// 2.5x that backward; elementwise 1 FLOP per output element (0 for pure copies). Bytes
// count each input read and the output written once, the least traffic an op can have.
#include "ttap/roofline.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <unordered_map>

#include "ttap/analyze.hpp"

namespace ttap {

namespace {

using Dims = std::vector<int64_t>;

// In double: recorded shapes are untrusted, and products of them can pass int64.
double numel(const Dims& d) {
  double n = 1;
  for (int64_t x : d) n *= static_cast<double>(std::max<int64_t>(x, 0));
  return n;
}

// ["c10::BFloat16","Scalar",""] -> strings (no escapes occur in these fields).
std::vector<std::string> parse_strings(std::string_view json) {
  std::vector<std::string> out;
  size_t i = 0;
  while ((i = json.find('"', i)) != std::string_view::npos) {
    const size_t j = json.find('"', i + 1);
    if (j == std::string_view::npos) break;
    out.emplace_back(json.substr(i + 1, j - i - 1));
    i = j + 1;
  }
  return out;
}

// "[16, 16]" -> {16, 16}; "1" -> {1}.
Dims parse_ints(std::string_view s) {
  Dims out;
  for (size_t i = 0; i < s.size();) {
    if ((s[i] >= '0' && s[i] <= '9') || s[i] == '-') {
      int64_t v = 0;
      auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
      if (ec != std::errc()) break;
      out.push_back(v);
      i = static_cast<size_t>(p - s.data());
    } else {
      ++i;
    }
  }
  return out;
}

struct DtypeInfo {
  const char* kind;
  int bytes;
};

DtypeInfo dtype_of(std::string_view t) {
  if (t == "float") return {"fp32", 4};
  if (t == "c10::BFloat16") return {"bf16", 2};
  if (t == "c10::Half") return {"fp16", 2};
  if (t == "double") return {"fp64", 8};
  if (t.find("Float8") != std::string_view::npos) return {"fp8", 1};
  if (t == "long int" || t == "long") return {"int64", 8};
  if (t == "int") return {"int32", 4};
  if (t == "bool" || t == "unsigned char" || t == "signed char") return {"int8", 1};
  return {"", 0};
}

bool one_of(std::string_view s, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

struct Args {
  std::vector<Dims> dims;
  std::vector<std::string> types;
  std::vector<std::string> concrete;
  Dims concrete_ints(size_t i) const { return i < concrete.size() ? parse_ints(concrete[i]) : Dims{}; }
  const Dims& dim(size_t i) const {
    static const Dims empty;
    return i < dims.size() ? dims[i] : empty;
  }
  int elem(size_t i) const { return i < types.size() ? dtype_of(types[i]).bytes : 0; }
};

OpCost unknown(std::string why) {
  OpCost c;
  c.why = std::move(why);
  return c;
}

OpCost gemm(const Args& a, size_t ia, size_t ib, double extra_bytes_elems, bool linear) {
  const Dims& A = a.dim(ia);
  const Dims& B = a.dim(ib);
  if (A.empty() || B.empty()) return unknown("operand shapes not recorded");
  double batch = 1, m, k, n;
  if (linear) {  // input [..., K], weight [N, K]
    if (B.size() != 2) return unknown("unexpected weight shape");
    k = static_cast<double>(A.back());
    n = static_cast<double>(B[0]);
    m = numel(A) / std::max(k, 1.0);
  } else {
    m = A.size() >= 2 ? static_cast<double>(A[A.size() - 2]) : 1.0;
    k = static_cast<double>(A.back());
    n = B.size() >= 2 ? static_cast<double>(B.back()) : 1.0;
    double lead_a = 1, lead_b = 1;
    for (size_t i = 0; i + 2 < A.size(); ++i) lead_a *= static_cast<double>(A[i]);
    for (size_t i = 0; i + 2 < B.size(); ++i) lead_b *= static_cast<double>(B[i]);
    batch = std::max(lead_a, lead_b);
  }
  OpCost c;
  c.known = true;
  c.flops = 2.0 * batch * m * n * k;
  const int e = std::max(a.elem(ia), 1);
  c.bytes = e * (numel(A) + numel(B) + batch * m * n + extra_bytes_elems);
  return c;
}

// Convolution forward cost from input [N, C, *in], weight [K, C/g, *k] and the layer's
// stride, padding and dilation. The weight's second dimension is C/groups, so grouped
// convolutions need no separate groups count.
OpCost conv_forward(const Args& a, const Dims& stride, const Dims& pad, const Dims& dil) {
  const Dims& in = a.dim(0);
  const Dims& w = a.dim(1);
  if (in.size() < 3 || w.size() != in.size()) return unknown("input or weight shape not recorded");
  const size_t spatial = in.size() - 2;
  if (stride.empty() || pad.empty()) return unknown("stride/padding not recorded (traces before Concrete Inputs)");
  auto at = [](const Dims& d, size_t i, int64_t dflt) { return d.empty() ? dflt : d[std::min(i, d.size() - 1)]; };
  double out = 1, kernel = 1;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t o = (in[2 + i] + 2 * at(pad, i, 0) - at(dil, i, 1) * (w[2 + i] - 1) - 1) / std::max<int64_t>(at(stride, i, 1), 1) + 1;
    if (o <= 0) return unknown("inconsistent convolution shape");
    out *= static_cast<double>(o);
    kernel *= static_cast<double>(w[2 + i]);
  }
  OpCost c;
  c.known = true;
  const double per_out = 2.0 * static_cast<double>(w[1]) * kernel;
  c.flops = per_out * static_cast<double>(in[0]) * static_cast<double>(w[0]) * out;
  c.bytes = std::max(a.elem(0), 1) * (numel(in) + numel(w) + static_cast<double>(in[0]) * static_cast<double>(w[0]) * out);
  return c;
}

}  // namespace

std::vector<std::vector<int64_t>> parse_dims(std::string_view json) {
  std::vector<Dims> out;
  size_t i = json.find('[');
  if (i == std::string_view::npos) return out;
  ++i;
  while (i < json.size()) {
    while (i < json.size() && (json[i] == ',' || json[i] == ' ')) ++i;
    if (i >= json.size() || json[i] == ']') break;
    if (json[i] != '[') {  // a scalar entry
      while (i < json.size() && json[i] != ',' && json[i] != ']') ++i;
      out.emplace_back();
      continue;
    }
    // One entry: a list of ints, or a nested list (TensorList) recorded as empty.
    int depth = 0;
    const size_t start = i;
    bool nested = false;
    for (; i < json.size(); ++i) {
      if (json[i] == '[') nested |= ++depth > 1;
      if (json[i] == ']' && --depth == 0) break;
    }
    out.push_back(nested ? Dims{} : parse_ints(json.substr(start, i - start)));
    ++i;
  }
  return out;
}

OpCost op_cost(std::string_view name, std::string_view dims_json, std::string_view types_json, std::string_view concrete_json) {
  Args a{parse_dims(dims_json), parse_strings(types_json), parse_strings(concrete_json)};
  // Shapes come from the trace: beyond 2^40 per dimension they are not real, and the
  // integer arithmetic below (output sizes) stays exact within that bound.
  constexpr int64_t kMaxDim = int64_t{1} << 40;
  for (const Dims& d : a.dims)
    for (int64_t x : d)
      if (x < 0 || x > kMaxDim) return unknown("absurd shape");
  for (size_t i = 0; i < a.concrete.size(); ++i)
    for (int64_t x : a.concrete_ints(i))
      if (x < -kMaxDim || x > kMaxDim) return unknown("absurd argument");
  OpCost c;
  if (one_of(name, {"aten::mm", "aten::_scaled_mm"})) {
    c = gemm(a, 0, 1, 0, false);
  } else if (one_of(name, {"aten::addmm", "aten::_addmm_activation", "aten::baddbmm"})) {
    c = gemm(a, 1, 2, numel(a.dim(0)), false);
  } else if (one_of(name, {"aten::bmm", "aten::matmul"})) {
    c = gemm(a, 0, 1, 0, false);
  } else if (name == "aten::linear") {
    c = gemm(a, 0, 1, numel(a.dim(2)), true);
  } else if (one_of(name, {"aten::convolution", "aten::_convolution"})) {
    if (a.concrete.size() > 6 && a.concrete[6] == "True") return unknown("transposed convolution");
    c = conv_forward(a, a.concrete_ints(3), a.concrete_ints(4), a.concrete_ints(5));
  } else if (one_of(name, {"aten::conv1d", "aten::conv2d", "aten::conv3d"})) {
    c = conv_forward(a, a.concrete_ints(3), a.concrete_ints(4), a.concrete_ints(5));
  } else if (name == "aten::cudnn_convolution") {  // (input, weight, padding, stride, dilation, groups, ...)
    c = conv_forward(a, a.concrete_ints(3), a.concrete_ints(2), a.concrete_ints(4));
  } else if (name == "aten::miopen_convolution") {  // (input, weight, bias, padding, stride, dilation, groups, ...)
    c = conv_forward(a, a.concrete_ints(4), a.concrete_ints(3), a.concrete_ints(5));
  } else if (name == "aten::convolution_backward") {
    // (grad_output [N,K,*out], input [N,C,*in], weight [K,C/g,*k], bias_sizes, ..., output_mask)
    const Dims& go = a.dim(0);
    const Dims& in = a.dim(1);
    const Dims& w = a.dim(2);
    if (go.size() < 3 || in.size() != go.size() || w.size() != go.size()) return unknown("shapes not recorded");
    double out = 1, kernel = 1;
    for (size_t i = 2; i < go.size(); ++i) {
      out *= static_cast<double>(go[i]);
      kernel *= static_cast<double>(w[i]);
    }
    const double fwd = 2.0 * static_cast<double>(go[0]) * static_cast<double>(go[1]) * out * static_cast<double>(w[1]) * kernel;
    // output_mask, the last argument: "[True, True, False]" = input grad, weight grad, bias grad.
    int grads = 2;
    if (!a.concrete.empty() && a.concrete.back().find("True") != std::string::npos) {
      const std::string& mask = a.concrete.back();
      const size_t second = mask.find(',');
      grads = (mask.substr(0, second).find("True") != std::string::npos ? 1 : 0) +
              (second != std::string::npos && mask.substr(second + 1, mask.find(',', second + 1) - second - 1).find("True") != std::string::npos ? 1 : 0);
    }
    c.known = true;
    c.flops = fwd * std::max(grads, 1);
    c.bytes = std::max(a.elem(0), 1) * 2 * (numel(go) + numel(in) + numel(w));
  } else if (name.find("attention") != std::string_view::npos && name.find("aten::") == 0) {
    // Flash and efficient kernels take [B, L, H, D]; the SDPA entry points [B, H, L, D].
    const bool backward = name.find("backward") != std::string_view::npos;
    const size_t q_index = backward ? 1 : 0;
    const Dims& q = a.dim(q_index);
    const Dims& k = a.dim(q_index + 1);
    if (q.size() != 4 || k.size() != 4) return unknown("query/key shapes not recorded");
    const bool bl_hd = name.find("_flash_attention_") != std::string_view::npos || name.find("_efficient_attention_") != std::string_view::npos;
    const double b = static_cast<double>(q[0]), d = static_cast<double>(q[3]);
    const double h = static_cast<double>(bl_hd ? q[2] : q[1]);
    const double lq = static_cast<double>(bl_hd ? q[1] : q[2]), lk = static_cast<double>(bl_hd ? k[1] : k[2]);
    c.known = true;
    c.flops = 4.0 * b * h * lq * lk * d * (backward ? 2.5 : 1.0);
    const double qkvo = 2 * numel(q) + 2 * numel(k);
    c.bytes = static_cast<double>(std::max(a.elem(q_index), 1)) * qkvo * (backward ? 2.0 : 1.0);
  } else if (categorize_op(name) == OpCategory::elementwise) {
    double out = 0;
    double in_bytes = 0;
    for (size_t i = 0; i < a.dims.size(); ++i) {
      if (a.elem(i) == 0 || a.dims[i].empty()) continue;
      out = std::max(out, numel(a.dims[i]));
      in_bytes += numel(a.dims[i]) * a.elem(i);
    }
    if (out == 0) return unknown("no tensor shapes recorded");
    const bool pure_copy = one_of(name, {"aten::copy_", "aten::to", "aten::_to_copy", "aten::clone", "aten::contiguous",
                                         "aten::fill_", "aten::zero_", "aten::index", "aten::embedding"});
    c.known = true;
    c.flops = pure_copy ? 0.0 : static_cast<double>(out);
    c.bytes = in_bytes + static_cast<double>(out) * std::max(a.elem(0), 1);
  } else {
    return unknown("no cost model for this op");
  }
  if (c.known) {
    for (size_t i = 0; i < a.types.size(); ++i) {
      const DtypeInfo t = dtype_of(a.types[i]);
      if (t.bytes > 0 && !a.dim(i).empty()) {
        c.dtype = t.kind;
        break;
      }
    }
  }
  return c;
}

const std::vector<DeviceSpec>& device_specs() {
  // Most specific names first. TFLOP/s dense; TB/s.
  static const std::vector<DeviceSpec> specs = {
      {"B200", 80.0, 1100.0, 2250.0, 2250.0, 4500.0, 8.0},
      {"H200", 66.9, 494.7, 989.4, 989.4, 1978.9, 4.8},
      {"H100 PCIe", 51.2, 378.0, 756.5, 756.5, 1513.0, 2.0},
      {"H100", 66.9, 494.7, 989.4, 989.4, 1978.9, 3.35},
      {"A100-SXM4-80GB", 19.5, 156.0, 312.0, 312.0, 0, 2.039},
      {"A100 80GB", 19.5, 156.0, 312.0, 312.0, 0, 2.039},
      {"A100", 19.5, 156.0, 312.0, 312.0, 0, 1.555},
      {"V100", 15.7, 0, 0, 125.0, 0, 0.9},
      {"2080 Ti", 13.4, 0, 0, 53.8, 0, 0.616},
      {"MI300X", 163.4, 653.7, 1307.4, 1307.4, 2614.9, 5.3},
      {"MI250X", 95.7, 0, 383.0, 383.0, 0, 3.2768},
      {"MI250", 90.5, 0, 362.1, 362.1, 0, 3.2768},
  };
  return specs;
}

const DeviceSpec* find_device_spec(std::string_view device_name) {
  for (const auto& s : device_specs())
    if (device_name.find(s.name) != std::string_view::npos) return &s;
  return nullptr;
}

Roofline roofline(const Trace& t, const EventTree& tree) {
  Roofline r;
  // The device most GPU work ran on.
  std::map<int32_t, size_t> work;
  for (EventId g : tree.gpu_events()) ++work[t.track_of(g).device];
  int32_t device = -1;
  size_t most = 0;
  for (auto [d, n] : work)
    if (n > most) std::tie(device, most) = std::pair{d, n};
  if (const DeviceProperties* p = t.device(device)) {
    r.device_name = p->name;
    r.device = find_device_spec(p->name);
  }

  // Kernel time per op instance, and whether its kernels ran TF32.
  std::unordered_map<EventId, std::pair<int64_t, bool>> per_op;
  for (EventId g : scoped_gpu_events(t, tree)) {
    const EventId op = tree.owner_op(g);
    if (op == kNoEvent || t.category[g] != Category::Kernel) continue;
    auto& [time, tf32] = per_op[op];
    time += t.dur[g];
    tf32 |= t.name_of(g).find("tf32") != std::string_view::npos;
  }
  struct Key {
    StringId name, dims, types;
    bool operator<(const Key& o) const { return std::tie(name, dims, types) < std::tie(o.name, o.dims, o.types); }
  };
  std::map<Key, std::pair<RooflineRow, OpCost>> groups;
  for (const auto& [op, tk] : per_op) {
    const OpArgs* a = t.op(op);
    const Key key{t.name[op], a ? a->input_dims : kNoString, a ? a->input_types : kNoString};
    auto [it, inserted] = groups.try_emplace(key);
    RooflineRow& row = it->second.first;
    if (inserted) {
      const std::string_view concrete = a ? t.strings.view(a->concrete_inputs) : std::string_view{};
      it->second.second = op_cost(t.name_of(op), t.strings.view(key.dims), t.strings.view(key.types), concrete);
      row.name = std::string(t.name_of(op));
      row.input_dims = std::string(t.strings.view(key.dims));
      row.dtype = it->second.second.dtype;
      row.peak_kind = row.dtype;
    }
    if (tk.second && row.dtype == "fp32") row.peak_kind = "tf32";
    ++row.count;
    row.kernel_time += tk.first;
  }
  for (auto& [key, entry] : groups) {
    auto& [row, cost] = entry;
    if (!cost.known) {
      const OpCategory c = categorize_op(row.name);
      if (c == OpCategory::GEMM || c == OpCategory::CONV_fwd || c == OpCategory::CONV_bwd || c == OpCategory::SDPA_fwd ||
          c == OpCategory::SDPA_bwd)
        r.unknown_kernel_time += row.kernel_time;
      continue;
    }
    row.flops = cost.flops;
    row.bytes = cost.bytes;
    const double seconds = static_cast<double>(row.kernel_time) / 1e9 / static_cast<double>(row.count);
    row.achieved_tflops = seconds > 0 ? row.flops / seconds / 1e12 : 0;
    row.achieved_tbs = seconds > 0 ? row.bytes / seconds / 1e12 : 0;
    row.intensity = row.bytes > 0 ? row.flops / row.bytes : 0;
    if (r.device) {
      const DeviceSpec& s = *r.device;
      const bool matrix = categorize_op(row.name) != OpCategory::elementwise;
      double peak = s.fp32;
      if (matrix) {
        if (row.peak_kind == "tf32" && s.tf32 > 0) peak = s.tf32;
        if (row.peak_kind == "bf16" && s.bf16 > 0) peak = s.bf16;
        if (row.peak_kind == "fp16" && s.fp16 > 0) peak = s.fp16;
        if (row.peak_kind == "fp8" && s.fp8 > 0) peak = s.fp8;
      } else {
        row.peak_kind = "fp32";  // elementwise work runs on the vector units
      }
      const double ridge = peak / s.bandwidth;  // FLOP/byte where the roofs meet
      row.compute_bound = row.intensity >= ridge;
      const double attainable = std::min(peak, row.intensity * s.bandwidth);
      if (row.flops > 0 && attainable > 0) row.roof_pct = 100.0 * row.achieved_tflops / attainable;
      else if (row.flops == 0) row.roof_pct = 100.0 * row.achieved_tbs / s.bandwidth;
    }
    r.rows.push_back(row);
  }
  std::sort(r.rows.begin(), r.rows.end(), [](const RooflineRow& a, const RooflineRow& b) {
    return a.kernel_time != b.kernel_time ? a.kernel_time > b.kernel_time : a.name < b.name;
  });
  return r;
}

}  // namespace ttap
