// `ttap tree`: the event tree as indented text, like TraceLens's Trace2Tree view.
#pragma once

#include <cstdio>
#include <optional>
#include <regex>

#include "ttap/modules.hpp"
#include "ttap/tree.hpp"

namespace ttap {

struct TreeViewOptions {
  std::optional<int64_t> step;       // only the subtree of ProfilerStep#N
  int depth = -1;                    // levels below each printed root; -1 = all
  std::optional<std::regex> match;   // only subtrees whose root name matches, with their ancestors
  bool gpu = true;                   // print GPU work under its launch
  bool json = false;                 // one JSON document (schema ttap.tree/1) instead of indented text
};

// Returns the number of lines (JSON: nodes) written. Throws std::invalid_argument when --step names a
// step the trace does not have.
size_t write_tree(std::FILE* out, const Trace& trace, const EventTree& tree, const TreeViewOptions& options);

// `ttap tree --modules`: the nn.Module hierarchy with the GPU time each part launched.
// `depth` and `match` as for the event tree. Returns the lines written.
size_t write_module_tree(std::FILE* out, const ModuleTree& modules, const TreeViewOptions& options);

// "(cpu)", "(python)", "(cuda_runtime)", "(kernel)", ...
std::string_view tree_label(Category c);

}  // namespace ttap
