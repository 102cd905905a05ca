#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "commands.hpp"
#include "ttap/input.hpp"
#include "ttap/tree_view.hpp"

namespace ttap::cli {

namespace {

// stdout, or the -o file, closed (and checked) when the tree is written.
struct Output {
  explicit Output(const std::string& path) : path_(path) {
    if (path.empty() || path == "-") return;
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) throw InputError(path, fmt::format("cannot write: {}", std::strerror(errno)));
  }
  ~Output() {
    if (file_) std::fclose(file_);
  }
  std::FILE* get() const { return file_ ? file_ : stdout; }
  void finish() {
    if (!file_) {
      std::fflush(stdout);
      return;
    }
    const bool ok = !std::ferror(file_) && std::fclose(file_) == 0;
    file_ = nullptr;
    if (!ok) throw InputError(path_, fmt::format("write failed: {}", std::strerror(errno)));
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace

int run_tree(const TreeOptions& o) {
  TreeViewOptions view;
  view.step = o.step;
  view.depth = o.depth;
  view.gpu = !o.no_gpu;
  view.json = o.format == "json";
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
    Output out(o.output);
    write_module_tree(out.get(), modules, view);
    out.finish();
    return kOk;
  }
  if (o.step && std::none_of(l.tree.steps().begin(), l.tree.steps().end(), [&](const Step& s) { return s.number == *o.step; })) {
    // Checked before the output file is opened, so a bad --step leaves no empty file behind;
    // write_tree throws before it writes anything and its message lists the steps there are.
    TreeViewOptions probe = view;
    probe.json = false;
    try {
      write_tree(stdout, l.trace, l.tree, probe);
    } catch (const std::invalid_argument& e) {
      fmt::print(stderr, "ttap: error: {}: {}\n", l.trace.source, e.what());
      return kBadInput;
    }
  }
  Output out(o.output);
  write_tree(out.get(), l.trace, l.tree, view);
  out.finish();
  return kOk;
}

}  // namespace ttap::cli
