// Roofline: FLOPs and bytes of GEMM, convolution, attention and elementwise ops from
// their recorded shapes, set against the device's peaks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ttap/tree.hpp"

namespace ttap {

// Dense peaks from the vendors' datasheets (boost clock, no sparsity). TFLOP/s per
// dtype; TB/s for device memory.
struct DeviceSpec {
  std::string_view name;
  double fp32 = 0, tf32 = 0, bf16 = 0, fp16 = 0, fp8 = 0;
  double bandwidth = 0;
};

// By the deviceProperties name ("NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB", ...);
// nullptr when unknown.
const DeviceSpec* find_device_spec(std::string_view device_name);
const std::vector<DeviceSpec>& device_specs();

struct OpCost {
  bool known = false;
  double flops = 0;
  double bytes = 0;       // inputs read + output written, once each
  std::string dtype;      // of the first tensor input: "fp32", "bf16", "fp16", "fp8", "fp64", ...
  std::string why;        // when unknown: what the trace lacks
};

// From an op's name and its recorded Input Dims, Input type and Concrete Inputs (raw JSON
// as stored in the Trace).
OpCost op_cost(std::string_view name, std::string_view input_dims, std::string_view input_types,
               std::string_view concrete_inputs);

struct RooflineRow {
  std::string name;
  std::string input_dims;
  std::string dtype;
  std::string peak_kind;     // the peak the op is held to: "bf16", "tf32", "fp32", ...
  int64_t count = 0;
  int64_t kernel_time = 0;   // ns, total
  double flops = 0;          // per instance
  double bytes = 0;          // per instance
  double achieved_tflops = 0;
  double achieved_tbs = 0;
  double intensity = 0;      // FLOP per byte
  bool compute_bound = false;  // intensity above the device's ridge point
  double roof_pct = 0;       // achieved / attainable at this intensity
};

struct Roofline {
  const DeviceSpec* device = nullptr;
  std::string device_name;
  std::vector<RooflineRow> rows;  // per unique (op, shapes, types), by kernel time
  int64_t unknown_kernel_time = 0;  // GPU time of GEMM/conv/SDPA ops whose cost is unknown
};

Roofline roofline(const Trace& trace, const EventTree& tree);

// [[4,3,224,224],[768],[]] -> {{4,3,224,224},{768},{}}; nested lists (TensorList) become
// empty entries. Public for tests.
std::vector<std::vector<int64_t>> parse_dims(std::string_view json);

}  // namespace ttap
