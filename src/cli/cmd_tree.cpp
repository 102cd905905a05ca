#include <cstdio>
#include <stdexcept>

#include <fmt/format.h>

#include "commands.hpp"
#include "ttap/tree_view.hpp"

namespace ttap::cli {

int run_tree(const TreeOptions& o) {
  TreeViewOptions view;
  view.step = o.step;
  view.depth = o.depth;
  view.gpu = !o.no_gpu;
  if (!o.match.empty()) {
    try {
      view.match.emplace(o.match, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      fmt::print(stderr, "ttap: error: --match: invalid regular expression \"{}\": {}\n", o.match, e.what());
      return kBadInput;
    }
  }
  Loaded l = load_and_build(o.trace);
  if (o.modules) {
    const ModuleTree modules = module_tree(l.trace, l.tree);
    if (!modules.has_modules) {
      fmt::print(stderr, "ttap: error: {}: no nn.Module frames: profile with with_stack=True (or with_modules=True) for a module view\n",
                 l.trace.source);
      return kBadInput;
    }
    write_module_tree(stdout, modules, view);
    std::fflush(stdout);
    return kOk;
  }
  try {
    write_tree(stdout, l.trace, l.tree, view);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "ttap: error: {}: {}\n", l.trace.source, e.what());
    return kBadInput;
  }
  std::fflush(stdout);
  return kOk;
}

}  // namespace ttap::cli
