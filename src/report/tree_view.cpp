#include "ttap/tree_view.hpp"

#include "ttap/analyze.hpp"
#include "ttap/table.hpp"

#include <algorithm>
#include <tuple>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

namespace ttap {

std::string_view tree_label(Category c) {
  switch (c) {
    case Category::PythonFunction: return "(python)";
    case Category::CudaRuntime: return "(cuda_runtime)";
    case Category::CudaDriver: return "(cuda_driver)";
    case Category::Kernel: return "(kernel)";
    case Category::GpuMemcpy: return "(memcpy)";
    case Category::GpuMemset: return "(memset)";
    case Category::UserAnnotation: return "(annotation)";
    default: return "(cpu)";
  }
}

namespace {

// Text lines indent 2 spaces per level up to this depth (real traces stay below ~150).
constexpr size_t kMaxIndent = 256;

class Writer {
 public:
  Writer(std::FILE* out, const Trace& t, const EventTree& tree, const TreeViewOptions& o)
      : out_(out), t_(t), tree_(tree), o_(o) {}
  ~Writer() { flush(); }

  void line(EventId e, size_t indent) {
    if (o_.json) return json_node(e, indent);
    // Indentation is capped: a hostile trace nests 10^6 events, and 2 spaces per level
    // would make the output quadratic (a terabyte). Deeper lines say their depth instead.
    buf_.append(std::min(indent, kMaxIndent) * 2, ' ');
    if (indent > kMaxIndent) fmt::format_to(std::back_inserter(buf_), "[depth {}] ", indent);
    buf_ += tree_label(t_.category[e]);
    buf_ += ' ';
    buf_ += t_.name_of(e);
    if (is_gpu_activity(t_.category[e])) {
      fmt::format_to(std::back_inserter(buf_), "  [{:.3f} us, stream {}]\n", to_us(t_.dur[e]), t_.track_of(e).stream);
    } else {
      fmt::format_to(std::back_inserter(buf_), "  [{:.3f} us]\n", to_us(t_.dur[e]));
    }
    ++lines_;
    if (buf_.size() > (1 << 20)) flush();
  }

  // Pre-order, children in order. With an explicit stack, not recursion: a trace can nest
  // events a million deep, far beyond the call stack.
  void subtree(EventId e, size_t indent, int remaining) {
    struct Frame {
      EventId e;
      size_t indent;
      int remaining;
    };
    std::vector<Frame> stack{{e, indent, remaining}};
    while (!stack.empty()) {
      const Frame f = stack.back();
      stack.pop_back();
      line(f.e, f.indent);
      if (f.remaining == 0) continue;
      const auto children = tree_.children(f.e);
      for (auto it = children.rbegin(); it != children.rend(); ++it) {
        if (!o_.gpu && is_gpu_activity(t_.category[*it])) continue;
        stack.push_back({*it, f.indent + 1, f.remaining < 0 ? -1 : f.remaining - 1});
      }
    }
  }

  bool matches(EventId e) {
    auto [it, inserted] = cache_.try_emplace(t_.name[e], false);
    if (inserted) {
      const std::string_view n = t_.name_of(e);
      it->second = std::regex_search(n.begin(), n.end(), *o_.match);
    }
    return it->second;
  }

  // Prints matching subtrees under `e`, with the not-yet-printed ancestors above them.
  // Pre-order with an explicit stack (see subtree); `path` holds the ancestors of the
  // event being visited, cut back to its depth on each visit.
  void search(EventId root) {
    std::vector<EventId> path;
    std::vector<std::pair<EventId, size_t>> stack{{root, 0}};  // event, depth
    while (!stack.empty()) {
      const auto [e, depth] = stack.back();
      stack.pop_back();
      path.resize(depth);
      if (matches(e)) {
        size_t common = 0;
        while (common < printed_path_.size() && common < path.size() && printed_path_[common] == path[common]) ++common;
        for (size_t i = common; i < path.size(); ++i) line(path[i], i);
        printed_path_ = path;
        subtree(e, path.size(), o_.depth);
        continue;
      }
      path.push_back(e);
      const auto children = tree_.children(e);
      for (auto it = children.rbegin(); it != children.rend(); ++it) stack.emplace_back(*it, depth + 1);
    }
  }

  void root(EventId e) {
    if (o_.match) {
      search(e);
    } else {
      subtree(e, 0, o_.depth);
    }
  }

  // One node of the JSON form: the same fields the text line shows, in machine units (us).
  void json_node(EventId e, size_t depth) {
    buf_ += lines_ ? ",\n" : "\n";
    std::string_view label = tree_label(t_.category[e]);
    label = label.substr(1, label.size() - 2);  // "(kernel)" -> "kernel"
    fmt::format_to(std::back_inserter(buf_), "{{\"depth\":{},\"category\":\"{}\",\"name\":\"{}\",\"ts_us\":{:.3f},\"dur_us\":{:.3f}",
                   depth, label, json_escape(t_.name_of(e)), to_us(t_.ts[e]), to_us(t_.dur[e]));
    if (is_gpu_activity(t_.category[e])) fmt::format_to(std::back_inserter(buf_), ",\"stream\":{}", t_.track_of(e).stream);
    if (!thread_.empty()) fmt::format_to(std::back_inserter(buf_), ",\"thread\":\"{}\"", json_escape(thread_));
    buf_ += '}';
    ++lines_;
    if (buf_.size() > (1 << 20)) flush();
  }

  void open_json(const std::string& source) {
    fmt::format_to(std::back_inserter(buf_), "{{\"schema\":\"ttap.tree/1\",\"trace\":\"{}\",\"nodes\":[", json_escape(source));
  }
  void close_json() { buf_ += "\n]}\n"; }
  void thread(std::string name) { thread_ = std::move(name); }

  void header(const std::string& text) {
    if (o_.json) return;
    buf_ += text;
    buf_ += '\n';
    ++lines_;
  }

  size_t lines() const { return lines_; }

 private:
  void flush() {
    if (!buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), out_);
    buf_.clear();
  }
  std::FILE* out_;
  const Trace& t_;
  const EventTree& tree_;
  const TreeViewOptions& o_;
  std::string buf_;
  size_t lines_ = 0;
  std::unordered_map<StringId, bool> cache_;
  std::vector<EventId> printed_path_;
  std::string thread_;  // JSON: the thread of the nodes being written
};

}  // namespace

size_t write_tree(std::FILE* out, const Trace& t, const EventTree& tree, const TreeViewOptions& o) {
  Writer w(out, t, tree, o);
  if (o.json) w.open_json(t.source);
  if (o.step) {
    for (const Step& s : tree.steps()) {
      if (s.number == *o.step) {
        w.root(s.event);
        if (o.json) w.close_json();
        return w.lines();
      }
    }
    std::string have;
    for (const Step& s : tree.steps()) have += fmt::format("{}{}", have.empty() ? "" : ", ", s.number);
    throw std::invalid_argument(have.empty() ? fmt::format("no step {}: the trace has no ProfilerStep#N spans", *o.step)
                                             : fmt::format("no step {}: the trace has steps {}", *o.step, have));
  }
  for (size_t track = 0; track < tree.roots_by_track().size(); ++track) {
    const auto& roots = tree.roots_by_track()[track];
    if (roots.empty()) continue;
    const Track& tr = t.tracks[track];
    auto id = [&](int64_t v, StringId label) { return label != kNoString ? std::string(t.strings.view(label)) : std::to_string(v); };
    std::string name = tr.thread_name != kNoString ? fmt::format(" ({})", t.strings.view(tr.thread_name)) : "";
    if (!o.match) w.header(fmt::format("# thread {}/{}{}", id(tr.pid, tr.pid_label), id(tr.tid, tr.tid_label), name));
    w.thread(fmt::format("{}/{}{}", id(tr.pid, tr.pid_label), id(tr.tid, tr.tid_label), name));
    for (EventId r : roots) w.root(r);
  }
  if (o.json) w.close_json();
  return w.lines();
}

size_t write_module_tree(std::FILE* out, const ModuleTree& m, const TreeViewOptions& o) {
  std::string buf;
  size_t lines = 0;
  const double total = static_cast<double>(std::max<int64_t>(m.total_gpu_time, 1));
  if (o.json) buf = "{\"schema\":\"ttap.modules/1\",\"nodes\":[";
  auto line = [&](int32_t id, size_t indent) {
    const ModuleNode& n = m.nodes[id];
    if (o.json) {
      fmt::format_to(std::back_inserter(buf),
                     "{}\n{{\"depth\":{},\"name\":\"{}\",\"gpu_ms\":{:.6f},\"gpu_share\":{:.6f},\"kernels\":{},\"self_ms\":{:.6f},\"calls\":{}}}",
                     lines ? "," : "", indent, json_escape(n.name), static_cast<double>(n.gpu_time) / 1e6,
                     static_cast<double>(n.gpu_time) / total, n.kernels, static_cast<double>(n.self_time) / 1e6, n.calls);
      ++lines;
      return;
    }
    buf.append(std::min(indent, kMaxIndent) * 2, ' ');
    if (indent > kMaxIndent) fmt::format_to(std::back_inserter(buf), "[depth {}] ", indent);
    fmt::format_to(std::back_inserter(buf), "(module) {}  [{:.3f} ms GPU, {:.1f}%, {}, self {:.3f} ms, {}]\n", n.name,
                   static_cast<double>(n.gpu_time) / 1e6, 100.0 * static_cast<double>(n.gpu_time) / total,
                   count_text(n.kernels, "kernel"), static_cast<double>(n.self_time) / 1e6, count_text(n.calls, "call"));
    ++lines;
    if (buf.size() > (1 << 20)) {
      std::fwrite(buf.data(), 1, buf.size(), out);
      buf.clear();
    }
  };
  // Pre-order with explicit stacks, as in the event tree's Writer: modules nest as deep as
  // the trace's Python frames do.
  auto subtree = [&](int32_t top, size_t top_indent, int top_remaining) {
    std::vector<std::tuple<int32_t, size_t, int>> stack{{top, top_indent, top_remaining}};
    while (!stack.empty()) {
      const auto [id, indent, remaining] = stack.back();
      stack.pop_back();
      line(id, indent);
      if (remaining == 0) continue;
      const auto& children = m.nodes[id].children;
      for (auto it = children.rbegin(); it != children.rend(); ++it)
        stack.emplace_back(*it, indent + 1, remaining < 0 ? -1 : remaining - 1);
    }
  };
  auto search = [&]() {
    std::vector<int32_t> path;
    std::vector<std::pair<int32_t, size_t>> stack{{0, 0}};  // node, depth
    while (!stack.empty()) {
      const auto [id, depth] = stack.back();
      stack.pop_back();
      path.resize(depth);
      if (std::regex_search(m.nodes[id].name, *o.match)) {
        for (size_t i = 0; i < path.size(); ++i) line(path[i], i);
        subtree(id, path.size(), o.depth);
        continue;
      }
      path.push_back(id);
      const auto& children = m.nodes[id].children;
      for (auto it = children.rbegin(); it != children.rend(); ++it) stack.emplace_back(*it, depth + 1);
    }
  };
  if (o.match) {
    search();
  } else {
    subtree(0, 0, o.depth);
  }
  if (o.json) buf += "\n]}\n";
  std::fwrite(buf.data(), 1, buf.size(), out);
  return lines;
}

}  // namespace ttap
