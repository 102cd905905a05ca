// User code locations from python_function frames ("train.py(42): step"). The profiler
// writes library files relative to their sys.path entry ("torch/nn/modules/linear.py",
// "threading.py"), so "user code" is told apart by the first path component: a file of
// a known library or of the standard library is not the user's.
#include <set>

#include "classify.hpp"

namespace ttap {

namespace {

// Top-level packages whose frames are never the place to fix a user's code. Standard
// library modules that show up in training stacks, and the libraries around PyTorch.
constexpr std::string_view kLibraryRoots[] = {
    "torch", "torchvision", "torchaudio", "torchtext", "functorch", "triton", "numpy", "transformers",
    "accelerate", "diffusers", "timm", "tqdm", "lightning", "pytorch_lightning", "lightning_fabric",
    "deepspeed", "fairscale", "apex", "peft", "datasets", "huggingface_hub", "safetensors", "tensorboard",
    "threading", "multiprocessing", "concurrent", "asyncio", "contextlib", "functools", "runpy", "queue",
    "selectors", "socket", "subprocess", "typing", "abc", "importlib", "collections", "copy", "json",
    "logging", "os", "posixpath", "random", "tempfile", "traceback", "warnings", "weakref",
    "dataclasses", "enum", "inspect", "pickle", "pathlib", "unittest"};

bool library_file(std::string_view file) {
  if (file.empty() || file.front() == '<') return true;  // <frozen ...>, <string>
  for (std::string_view marker : {"site-packages/", "dist-packages/", "/lib/python"})
    if (file.find(marker) != std::string_view::npos) return true;
  std::string_view root = file.substr(0, file.find('/'));
  if (root.ends_with(".py")) root.remove_suffix(3);
  for (std::string_view lib : kLibraryRoots)
    if (root == lib) return true;
  return false;
}

}  // namespace

std::vector<CodeLocation> user_code_locations(const Trace& trace, const EventTree& tree,
                                              const std::vector<EventId>& events, size_t limit) {
  std::vector<CodeLocation> out;
  std::set<std::pair<std::string, int>> seen;
  for (EventId e : events) {
    if (out.size() >= limit) break;
    if (e >= trace.size()) continue;
    for (EventId a : tree.path_to_root(e)) {
      if (trace.category[a] != Category::PythonFunction) continue;
      auto loc = parse_frame(trace.name_of(a));
      if (!loc || library_file(loc->file)) continue;
      if (seen.emplace(loc->file, loc->line).second) out.push_back(std::move(*loc));
      break;  // the innermost user frame is the one to edit
    }
  }
  return out;
}

}  // namespace ttap
