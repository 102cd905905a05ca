// Redaction: user code names leave the machine only as placeholders. What counts as user
// code is decided from the trace's own python_function frames, so the placeholders are the
// same every time the same trace is classified (and cached answers still match).
#include <algorithm>
#include <iterator>
#include <cctype>
#include <string>
#include <unordered_set>

#include "ttap/llm.hpp"

namespace ttap {

namespace {

// Top-level modules whose frames are not the user's: PyTorch and its family, well-known
// public packages, and the Python standard library. Kineto writes paths relative to their
// sys.path entry ("torch/nn/modules/linear.py", "threading.py"), so the first component
// is all there is to go on.
constexpr std::string_view kLibraryModules[] = {
    // PyTorch and public packages
    "torch", "torchvision", "torchaudio", "torchtext", "torchrec", "torchdata", "functorch", "triton", "numpy",
    "transformers", "tqdm", "accelerate", "apex", "deepspeed", "timm", "fairscale", "huggingface_hub",
    "safetensors", "tokenizers", "datasets", "PIL", "einops", "xformers", "flash_attn", "scipy", "pandas",
    "sklearn", "lightning", "pytorch_lightning", "torchmetrics", "megatron", "peft", "vllm", "sympy", "jinja2",
    "typing_extensions", "filelock", "fsspec", "packaging", "six", "google", "yaml", "regex",
    // Python standard library
    "threading", "typing", "multiprocessing", "dataclasses", "enum", "contextlib", "functools", "abc",
    "collections", "os", "queue", "selectors", "socket", "concurrent", "asyncio", "importlib", "inspect", "copy",
    "weakref", "logging", "random", "re", "json", "pickle", "warnings", "traceback", "runpy", "subprocess",
    "signal", "time", "tempfile", "shutil", "pathlib", "io", "codecs", "unittest", "ctypes", "string", "operator",
    "itertools", "numbers", "math", "types", "heapq", "bisect", "textwrap", "argparse", "sys", "socketserver",
    "http", "urllib", "email", "encodings", "genericpath", "posixpath", "fnmatch", "glob", "linecache",
    "tokenize", "ast", "dis", "pprint", "reprlib", "struct", "zipfile", "tarfile", "gzip", "hashlib", "base64",
    "uuid", "datetime", "locale", "platform", "sysconfig", "site", "_collections_abc", "_weakrefset",
    "contextvars", "statistics", "decimal", "sched", "ssl", "copyreg", "keyword", "stat", "selectors",
    "pdb", "cProfile", "profile", "timeit"};

// Function names that say nothing about the user's code and that the model needs to read
// the trace (forward, step, zero_grad, ...).
constexpr std::string_view kGenericFunctions[] = {
    "forward", "backward", "__call__", "_call_impl", "_wrapped_call_impl", "__next__", "__iter__", "__init__",
    "__enter__", "__exit__", "<module>", "<lambda>", "<listcomp>", "<genexpr>", "<dictcomp>", "<setcomp>",
    "main", "run", "step", "zero_grad", "wrapper", "inner", "decorate_context", "train", "eval", "_fn"};

bool is_library_file(std::string_view path) {
  if (path.empty() || path.front() == '<') return true;  // <built-in ...>, <frozen os>, <string>
  if (path.find("site-packages/") != std::string_view::npos || path.find("dist-packages/") != std::string_view::npos ||
      path.find("/lib/python") != std::string_view::npos)
    return true;
  if (path.front() == '/') return false;  // an absolute path outside the installation: the user's
  std::string_view top = path.substr(0, path.find('/'));
  if (top == path && top.ends_with(".py")) top.remove_suffix(3);
  return std::find(std::begin(kLibraryModules), std::end(kLibraryModules), top) != std::end(kLibraryModules);
}

// "path/to/file.py(42): func" -> {path, func}; false for other python_function names.
bool split_frame(std::string_view name, std::string_view& path, std::string_view& function) {
  const size_t sep = name.find("): ");
  if (sep == std::string_view::npos) return false;
  const size_t open = name.rfind('(', sep);
  if (open == std::string_view::npos || open == 0) return false;
  path = name.substr(0, open);
  function = name.substr(sep + 3);
  return true;
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// "MyNet_3" -> "MyNet": Kineto numbers module instances.
std::string_view strip_instance_suffix(std::string_view name) {
  const size_t underscore = name.rfind('_');
  if (underscore == std::string_view::npos || underscore + 1 == name.size()) return name;
  for (char c : name.substr(underscore + 1))
    if (!std::isdigit(static_cast<unsigned char>(c))) return name;
  return name.substr(0, underscore);
}

// The file whose forward an nn.Module frame runs: the first python frame below it that is
// not the nn.Module call machinery. Empty when the trace does not show one.
std::string_view module_forward_file(const Trace& t, const EventTree& tree, EventId module_event) {
  std::vector<std::pair<EventId, int>> stack{{module_event, 0}};
  while (!stack.empty()) {
    const auto [e, depth] = stack.back();
    stack.pop_back();
    if (e != module_event && t.category[e] == Category::PythonFunction) {
      std::string_view path, function;
      if (split_frame(t.name_of(e), path, function) && !path.ends_with("torch/nn/modules/module.py")) return path;
    }
    if (depth >= 3) continue;
    const auto kids = tree.children(e);
    for (auto k = kids.rbegin(); k != kids.rend(); ++k)
      if (t.category[*k] == Category::PythonFunction) stack.push_back({*k, depth + 1});
  }
  return {};
}

}  // namespace

LlmRedactor::LlmRedactor(const Trace& t, const EventTree& tree) {
  std::vector<uint8_t> seen(t.strings.size(), 0);
  for (EventId e = 0; e < t.size(); ++e) {
    if (t.category[e] != Category::PythonFunction || t.name[e] == kNoString || seen[t.name[e]]) continue;
    seen[t.name[e]] = 1;
    const std::string_view name = t.name_of(e);
    if (name.starts_with("nn.Module: ")) {
      const std::string_view cls = strip_instance_suffix(name.substr(11));
      const std::string_view file = module_forward_file(t, tree, e);
      // A module whose forward cannot be seen is redacted too: better a placeholder too many.
      if (file.empty() || !is_library_file(file)) add_identifier(std::string(cls), "UserModule_", module_count_);
      continue;
    }
    std::string_view path, function;
    if (!split_frame(name, path, function) || is_library_file(path)) continue;
    add_file(std::string(path));
    if (std::find(std::begin(kGenericFunctions), std::end(kGenericFunctions), function) == std::end(kGenericFunctions) &&
        !function.empty() && std::all_of(function.begin(), function.end(), is_identifier_char))
      add_identifier(std::string(function), "user_fn_", function_count_);
  }
  // Longest first, so a path is replaced before any shorter path it contains.
  std::stable_sort(files_.begin(), files_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

void LlmRedactor::add_file(const std::string& path) {
  for (const auto& f : files_)
    if (f.first == path) return;
  files_.emplace_back(path, "user_file_" + std::to_string(++file_count_) + ".py");
}

void LlmRedactor::add_identifier(const std::string& name, const char* prefix, int& counter) {
  if (name.empty() || identifiers_.count(name)) return;
  identifiers_.emplace(name, prefix + std::to_string(++counter));
}

std::string LlmRedactor::apply(std::string_view text) const {
  if (files_.empty() && identifiers_.empty()) return std::string(text);
  // Pass 1: file paths, wherever they start at a path boundary.
  std::string paths_done;
  paths_done.reserve(text.size());
  const auto path_boundary = [](char c) { return !(is_identifier_char(c) || c == '.' || c == '/' || c == '-'); };
  for (size_t i = 0; i < text.size();) {
    bool replaced = false;
    if (i == 0 || path_boundary(text[i - 1])) {
      for (const auto& [path, placeholder] : files_) {
        if (text.compare(i, path.size(), path) == 0) {
          paths_done += placeholder;
          i += path.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) paths_done += text[i++];
  }
  // Pass 2: function and class names as whole identifiers. Not after "::" (aten::item is
  // PyTorch's even when the user also has an `item`), '.' or '/' (a library's module or
  // path), nor before ".py" (a library file of the same name).
  std::string out;
  out.reserve(paths_done.size());
  const std::string_view s = paths_done;
  for (size_t i = 0; i < s.size();) {
    if (!is_identifier_char(s[i]) || (i > 0 && is_identifier_char(s[i - 1]))) {
      out += s[i++];
      continue;
    }
    size_t j = i;
    while (j < s.size() && is_identifier_char(s[j])) ++j;
    const std::string_view word = s.substr(i, j - i);
    const bool after_scope = (i >= 2 && s[i - 1] == ':' && s[i - 2] == ':') || (i >= 1 && (s[i - 1] == '.' || s[i - 1] == '/'));
    const bool before_py = s.compare(j, 3, ".py") == 0;
    std::string_view base = word;
    auto it = identifiers_.end();
    if (!after_scope && !before_py) {
      it = identifiers_.find(std::string(word));
      if (it == identifiers_.end()) {
        base = strip_instance_suffix(word);  // "MyNet_0": the class with Kineto's instance number
        if (base.size() != word.size()) it = identifiers_.find(std::string(base));
      }
    }
    if (it == identifiers_.end()) {
      out.append(word);
    } else {
      out += it->second;
      out.append(word.substr(base.size()));  // keep the instance number
    }
    i = j;
  }
  return out;
}

}  // namespace ttap
