// User code locations: the innermost python_function frame above an event that belongs to
// the user's program. Kineto names frames "path.py(LINE): function", with paths relative to
// the sys.path entry they were found under, so the standard library shows up as bare
// module names ("threading.py", "<frozen os>") and PyTorch as "torch/...". User code is
// everything else: not PyTorch and its sibling packages, not site-packages, not the
// standard library, not a <built-in ...> frame or an nn.Module marker.
#include <array>
#include <charconv>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "rule_index.hpp"

namespace ttap {

std::optional<CodeLocation> parse_frame(std::string_view name) {
  // Anchored on ".py(": a directory may hold parentheses ("runs (old)/train.py(3): f").
  const size_t open = name.find(".py(");
  if (open == std::string_view::npos) return std::nullopt;
  const size_t digits = open + 4;
  const size_t close = name.find(')', digits);
  if (close == std::string_view::npos) return std::nullopt;
  int line = 0;
  const auto [ptr, ec] = std::from_chars(name.data() + digits, name.data() + close, line);
  if (ec != std::errc{} || ptr != name.data() + close || line <= 0) return std::nullopt;
  CodeLocation loc;
  loc.file = std::string(name.substr(0, open + 3));
  loc.line = line;
  if (name.substr(close).starts_with("): ")) loc.function = std::string(name.substr(close + 3));
  return loc;
}

namespace rules {

namespace {

// Top-level standard-library modules that appear in stack traces of training loops.
constexpr std::array<std::string_view, 64> kStdlib = {
    "abc", "argparse", "ast", "asyncio", "bdb", "bisect", "codecs", "collections", "concurrent", "contextlib",
    "copy", "copyreg", "cProfile", "dataclasses", "dis", "enum", "functools", "genericpath", "gzip", "hashlib",
    "heapq", "importlib", "inspect", "io", "itertools", "json", "linecache", "logging", "multiprocessing",
    "numbers", "operator", "os", "pathlib", "pdb", "pickle", "posixpath", "pprint", "queue", "random", "re",
    "runpy", "selectors", "shutil", "signal", "site", "socket", "sre_compile", "sre_parse", "string", "subprocess",
    "tempfile", "textwrap", "threading", "time", "tokenize", "traceback", "types", "typing", "unittest", "uuid",
    "warnings", "weakref", "_weakrefset", "_collections_abc"};

// Libraries whose frames say where PyTorch is, not where the user's code is.
constexpr std::array<std::string_view, 8> kLibraryRoots = {"torch/",  "torchvision/", "torchaudio/", "torchtext/",
                                                           "numpy/",  "functorch/",   "triton/",     "typing_extensions"};

bool is_user_file(std::string_view file) {
  if (file.empty() || file.front() == '<') return false;
  if (file.find("site-packages/") != std::string_view::npos || file.find("dist-packages/") != std::string_view::npos ||
      file.find("/lib/python") != std::string_view::npos)
    return false;
  for (std::string_view root : kLibraryRoots)
    if (file.substr(0, root.size()) == root) return false;
  // The first path component, without ".py": a stdlib module when it is in the list.
  std::string_view top = file.substr(0, file.find('/'));
  if (top.size() > 3 && top.substr(top.size() - 3) == ".py") top.remove_suffix(3);
  for (std::string_view m : kStdlib)
    if (top == m) return false;
  return true;
}

// A user code frame's place; false for other frames and for library code.
bool user_frame(std::string_view name, CodeLocation& out) {
  std::optional<CodeLocation> loc = parse_frame(name);
  if (!loc || !is_user_file(loc->file)) return false;
  out = std::move(*loc);
  return true;
}

// The innermost user code frame at or above `e` ("train.py(42): step"), kNoEvent without
// one; `loc` gets its place.
EventId innermost_user_frame(const RuleIndex& ix, EventId e, CodeLocation& loc) {
  for (EventId p = e; p != kNoEvent; p = ix.tree.parent(p))
    if (ix.t.category[p] == Category::PythonFunction && user_frame(ix.t.name_of(p), loc)) return p;
  return kNoEvent;
}

}  // namespace

std::vector<CodeLocation> user_locations(const RuleIndex& ix, const std::vector<EventId>& events, size_t max_locations) {
  std::vector<CodeLocation> out;
  std::set<std::tuple<std::string, int, std::string>> seen;
  // The first events are the most telling; walking every ancestor of thousands of events
  // would cost more than the rest of a detector.
  constexpr size_t kMaxEventsWalked = 64;
  for (size_t i = 0; i < events.size() && i < kMaxEventsWalked && out.size() < max_locations; ++i) {
    EventId e = events[i];
    if (is_gpu_activity(ix.t.category[e])) e = ix.tree.launcher(e);
    CodeLocation loc;  // the innermost user frame is the one to show
    if (innermost_user_frame(ix, e, loc) != kNoEvent && seen.emplace(loc.file, loc.line, loc.function).second)
      out.push_back(std::move(loc));
  }
  return out;
}

EventId user_frame_above(const RuleIndex& ix, EventId e) {
  CodeLocation loc;
  return innermost_user_frame(ix, ix.tree.parent(e), loc);
}

EventId user_frame_at(const RuleIndex& ix, EventId top, int64_t b, int64_t e) {
  const Trace& t = ix.t;
  EventId best = top;
  CodeLocation loc;
  // A user frame at the top (a with_stack trace's `<module>`, which holds the whole run) is
  // a start, not the answer: the frame that held the gap lies inside it (gpuzoo_0014's idle
  // between two uploads read "in zoo.py(345): <module>", held by zoo.py(150): fetch).
  for (EventId at = top; at != kNoEvent;) {
    EventId widest = kNoEvent;
    int64_t most = 0;
    for (EventId c : ix.tree.children(at)) {
      const int64_t o = overlap(t.ts[c], t.end(c), b, e);
      if (o > most) most = o, widest = c;
    }
    at = widest;
    if (at != kNoEvent && t.category[at] == Category::PythonFunction && user_frame(t.name_of(at), loc))
      best = at;  // keep descending: the innermost user frame wins
  }
  return best;
}

std::string user_frame_name(const RuleIndex& ix, EventId top, int64_t b, int64_t e) {
  return std::string(ix.t.name_of(user_frame_at(ix, top, b, e)));
}

namespace {

// A module or function named for profiling, benchmarking or timing: a path component or a
// function's word beginning "profil" or "benchmark" (profiling/profile.py, run_torch_profiler,
// benchmarks/), or the word timer, timing, timed or timeit (_run_timed_pipe). Words, not
// substrings: "runtime", "uptime" or "timestep" in a model's own code name no harness.
bool harness_named(std::string_view text, std::string_view separators) {
  size_t b = 0;
  while (b < text.size()) {
    size_t e = text.find_first_of(separators, b);
    if (e == std::string_view::npos) e = text.size();
    std::string word = ascii_lower(text.substr(b, e - b));
    if (word.ends_with(".py")) word.resize(word.size() - 3);
    if (word.starts_with("profil") || word.starts_with("benchmark") || word == "timer" || word == "timing" ||
        word == "timed" || word == "timeit")
      return true;
    b = e + 1;
  }
  return false;
}

}  // namespace

std::optional<CodeLocation> harness_frame(const RuleIndex& ix, EventId e) {
  for (EventId p = ix.tree.parent(e); p != kNoEvent; p = ix.tree.parent(p)) {
    if (ix.t.category[p] != Category::PythonFunction) continue;
    std::optional<CodeLocation> loc = parse_frame(ix.t.name_of(p));
    if (!loc) continue;
    if (loc->file.starts_with("torch/profiler/") || loc->file.starts_with("torch/utils/benchmark/")) return loc;
    if (!is_user_file(loc->file)) continue;
    // The innermost user frame is the one the finding blames: it decides alone, so that a
    // harness around the whole run (profile_model_pipeline.py: profile) does not claim the
    // model's own reads inside it.
    if (harness_named(loc->file, "/") || harness_named(loc->function, "_")) return loc;
    return std::nullopt;
  }
  return std::nullopt;
}

std::string at_text(const std::vector<CodeLocation>& locs) {
  return locs.empty() ? "" : fmt::format(" at {}:{}", locs[0].file, locs[0].line);
}

std::string capture_setup_fix(std::string_view what, std::string_view where) {
  return fmt::format("{}{} happen while a CUDA graph is set up or captured (torch.cuda.graph synchronizes and empties "
                     "the allocator's cache before capture_begin; a capture allocates its graph's memory pool), "
                     "one-time warm-up work, not the step's: profile after capture (warm up first, then record with "
                     "torch.profiler.schedule(wait=..., warmup=..., active=...))",
                     what, where);
}

}  // namespace rules
}  // namespace ttap
