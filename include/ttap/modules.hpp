// GPU time rolled up by nn.Module hierarchy (TraceLens's NN module view), from the
// "nn.Module: Name_N" python_function frames above each kernel's launch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ttap/tree.hpp"

namespace ttap {

struct ModuleNode {
  std::string name;           // "ViTLayer_0"; the root, "(all GPU work)", holds as self time the work outside any module
  int32_t parent = -1;
  std::vector<int32_t> children;  // by GPU time, descending
  int64_t gpu_time = 0;       // ns, inclusive of submodules
  int64_t self_time = 0;      // ns, launched in this module but in none of its submodules
  int64_t kernels = 0;        // GPU events, inclusive
  int64_t calls = 0;          // times the module's frame appears (forward calls)
};

struct ModuleTree {
  std::vector<ModuleNode> nodes;  // nodes[0] is the root
  bool has_modules = false;       // any nn.Module frame at all
  int64_t total_gpu_time = 0;
};

ModuleTree module_tree(const Trace& trace, const EventTree& tree);

}  // namespace ttap
