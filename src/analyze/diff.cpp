// Comparing two traces of one workload. Steps are aligned by order; under each aligned
// pair of steps the two CPU trees are matched node by node (children by normalized name,
// i-th occurrence with i-th occurrence), so where the structures part the change is
// reported at the lowest common ancestor, as TraceLens's morphological diff does.
#include "ttap/diff.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

namespace ttap {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2.0;
}

GateResult gate(std::string metric, double base, double next, double threshold_pct) {
  GateResult g;
  g.metric = std::move(metric);
  g.base = base;
  g.next = next;
  g.delta_pct = base > 0 ? 100.0 * (next - base) / base : 0.0;
  g.regressed = base > 0 && g.delta_pct > threshold_pct;
  return g;
}

template <typename Map>
std::vector<DeltaRow> rows_of(const Map& base, const Map& next) {
  std::map<std::string, DeltaRow> rows;
  for (const auto& [k, v] : base) {
    DeltaRow& r = rows[k];
    r.key = k;
    r.base_count = v.first;
    r.base_time = v.second;
  }
  for (const auto& [k, v] : next) {
    DeltaRow& r = rows[k];
    r.key = k;
    r.new_count = v.first;
    r.new_time = v.second;
  }
  std::vector<DeltaRow> out;
  for (auto& [k, r] : rows) out.push_back(std::move(r));
  std::stable_sort(out.begin(), out.end(), [](const DeltaRow& a, const DeltaRow& b) {
    return std::llabs(a.delta()) > std::llabs(b.delta());
  });
  return out;
}

using Totals = std::unordered_map<std::string, std::pair<int64_t, int64_t>>;  // key -> count, ns

bool is_op(const Trace& t, EventId e) {
  const Category c = t.category[e];
  return (c == Category::CpuOp || c == Category::UserAnnotation || c == Category::DataLoader) &&
         profiler_step_number(t.name_of(e)) < 0;
}

// CPU time by normalized op name over the first `steps` steps, counting only the
// outermost occurrence of a name so recursion is not counted twice.
Totals op_totals(const Trace& t, const EventTree& tree, size_t steps) {
  Totals totals;
  std::unordered_map<StringId, std::string> names;
  for (EventId e = 0; e < t.size(); ++e) {
    if (!tree.in_tree(e) || !is_op(t, e)) continue;
    const int32_t s = tree.step_of(e);
    if (steps > 0 && (s < 0 || static_cast<size_t>(s) >= steps)) continue;
    auto [it, inserted] = names.try_emplace(t.name[e]);
    if (inserted) it->second = normalized_op_name(t.name_of(e));
    bool nested = false;
    for (EventId p = tree.parent(e); p != kNoEvent && !nested; p = tree.parent(p)) nested = t.name[p] == t.name[e];
    if (nested) continue;
    auto& [count, time] = totals[it->second];
    ++count;
    time += t.dur[e];
  }
  return totals;
}

Totals kernel_totals(const Trace& t, const EventTree& tree, size_t steps) {
  Totals totals;
  for (EventId g : tree.gpu_events()) {
    const int32_t s = tree.step_of(g);
    if (steps > 0 && (s < 0 || static_cast<size_t>(s) >= steps)) continue;
    auto& [count, time] = totals[std::string(t.name_of(g))];
    ++count;
    time += t.dur[g];
  }
  return totals;
}

Totals category_totals(const Trace& t, const EventTree& tree) {
  Totals totals;
  for (const auto& r : category_breakdown(t, tree))
    totals[std::string(op_category_name(r.category))] = {r.kernel_count, r.kernel_time};
  return totals;
}

class TreeMatcher {
 public:
  TreeMatcher(const Trace& b, const EventTree& bt, const Trace& n, const EventTree& nt) : b_(b), bt_(bt), n_(n), nt_(nt) {}

  void match(EventId base, EventId next, const std::string& path) {
    const auto base_children = cpu_children(b_, bt_, base);
    const auto new_children = cpu_children(n_, nt_, next);
    std::unordered_map<std::string, std::deque<EventId>> waiting;  // base children by name, in order
    for (EventId c : base_children) waiting[name(b_, c)].push_back(c);
    int64_t base_children_time = 0, new_children_time = 0;
    for (EventId c : base_children) base_children_time += b_.dur[c];
    for (EventId c : new_children) new_children_time += n_.dur[c];
    const std::string here = path.empty() ? name(n_, next) : path + " > " + name(n_, next);
    std::vector<std::pair<EventId, EventId>> pairs;
    for (EventId c : new_children) {
      auto it = waiting.find(name(n_, c));
      if (it == waiting.end() || it->second.empty()) {
        add(here, name(n_, c), "only in new", n_.dur[c]);
        continue;
      }
      pairs.emplace_back(it->second.front(), c);
      it->second.pop_front();
    }
    for (auto& [key, left] : waiting)
      for (EventId c : left) add(here, key, "only in base", -b_.dur[c]);
    const int64_t self_delta = (n_.dur[next] - new_children_time) - (b_.dur[base] - base_children_time);
    if (self_delta != 0) add(path, name(n_, next), "self time", self_delta);
    for (auto [bc, nc] : pairs) match(bc, nc, here);
  }

  std::vector<TreeChange> changes() const {
    std::vector<TreeChange> out;
    for (const auto& [key, c] : changes_) out.push_back(c);
    std::sort(out.begin(), out.end(), [](const TreeChange& a, const TreeChange& b) {
      return std::llabs(a.delta) != std::llabs(b.delta) ? std::llabs(a.delta) > std::llabs(b.delta) : a.path < b.path;
    });
    return out;
  }

 private:
  static std::vector<EventId> cpu_children(const Trace& t, const EventTree& tree, EventId e) {
    std::vector<EventId> out;
    for (EventId c : tree.children(e))
      if (!is_gpu_activity(t.category[c])) out.push_back(c);
    return out;
  }
  const std::string& name(const Trace& t, EventId e) {
    auto& cache = &t == &b_ ? base_names_ : new_names_;
    auto [it, inserted] = cache.try_emplace(t.name[e]);
    if (inserted) it->second = normalized_op_name(t.name_of(e));
    return it->second;
  }
  void add(const std::string& path, const std::string& name, const char* kind, int64_t delta) {
    TreeChange& c = changes_[path + '\x1f' + name + '\x1f' + kind];
    c.path = path;
    c.name = name;
    c.kind = kind;
    c.delta += delta;
    ++c.occurrences;
  }

  const Trace& b_;
  const EventTree& bt_;
  const Trace& n_;
  const EventTree& nt_;
  std::unordered_map<StringId, std::string> base_names_, new_names_;
  std::unordered_map<std::string, TreeChange> changes_;
};

std::string device_label(const Trace& t, int32_t device) {
  const DeviceProperties* p = t.device(device);
  return p && !p->name.empty() ? fmt::format("GPU {} ({})", device, p->name) : fmt::format("GPU {}", device);
}

// Names of the GPU models a trace ran on, in device order, without repeats.
std::string gpu_models(const Trace& t) {
  std::vector<std::string> names;
  for (const DeviceProperties& p : t.devices)
    if (!p.name.empty() && std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
  std::string out;
  for (const auto& s : names) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::vector<std::string> setup_differences(const Trace& b, const Trace& n) {
  std::vector<std::string> out;
  const std::string bg = gpu_models(b), ng = gpu_models(n);
  if (!bg.empty() && !ng.empty() && bg != ng)
    out.push_back(fmt::format("base and new ran on different GPUs (base: {}; new: {}): a change in time may be the "
                              "hardware's, not the code's",
                              bg, ng));
  const DistributedInfo &bd = b.distributed, &nd = n.distributed;
  if (bd.world_size > 0 && nd.world_size > 0 && bd.world_size != nd.world_size)
    out.push_back(fmt::format("base and new ran with different world sizes (base: {}, new: {}): per-rank work and "
                              "communication differ",
                              bd.world_size, nd.world_size));
  if (bd.rank >= 0 && nd.rank >= 0 && bd.rank != nd.rank)
    out.push_back(fmt::format("base and new are different ranks (base: rank {}, new: rank {}): compare the same rank, "
                              "or every rank with `ttap collectives`",
                              bd.rank, nd.rank));
  return out;
}

}  // namespace

std::string normalized_op_name(std::string_view name) {
  if (profiler_step_number(name) >= 0) return "ProfilerStep#*";
  // enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__ and the multi-process twin.
  const size_t hash = name.find("(DataLoader)#");
  const size_t iter = name.find("DataLoaderIter.");
  if (hash != std::string_view::npos && iter != std::string_view::npos && iter > hash) {
    return std::string(name.substr(0, hash + 13)) + "*" + std::string(name.substr(iter + 14));
  }
  return std::string(name);
}

std::optional<int64_t> peak_device_memory(const Trace& t) {
  int64_t peak_total = -1;
  std::map<int32_t, __int128> running;  // byte counts are bounded, their sums need room
  __int128 peak_running = -1;
  for (const MemoryEvent& m : t.memory_events) {
    if (m.device_type != 1) continue;  // 1 = CUDA (and HIP) device memory
    if (m.total_allocated >= 0) peak_total = std::max(peak_total, m.total_allocated);
    __int128& r = running[m.device_id];
    r += m.bytes;
    peak_running = std::max(peak_running, r);
  }
  if (peak_total >= 0) return peak_total;
  if (peak_running >= 0) return static_cast<int64_t>(std::min<__int128>(peak_running, INT64_MAX));
  return std::nullopt;
}

TraceDiff diff_traces(const Trace& b, const EventTree& bt, const Trace& n, const EventTree& nt, const DiffOptions& o) {
  TraceDiff d;
  const auto base_steps = step_breakdown(b, bt);
  const auto new_steps = step_breakdown(n, nt);
  const size_t aligned = std::min(base_steps.size(), new_steps.size());
  d.base_timeline = gpu_timeline(b, bt);
  d.new_timeline = gpu_timeline(n, nt);
  for (const GpuTimeline& g : d.base_timeline) d.base_devices.push_back(device_label(b, g.device));
  for (const GpuTimeline& g : d.new_timeline) d.new_devices.push_back(device_label(n, g.device));
  d.warnings = setup_differences(b, n);

  // Gates.
  if (aligned > 0) {
    // Medians, as TorchBench reports: a warm-up step or a hiccup does not swing the gate.
    std::vector<double> bd, nd, bb, nb;
    for (size_t i = 0; i < aligned; ++i) {
      bd.push_back(static_cast<double>(base_steps[i].duration));
      nd.push_back(static_cast<double>(new_steps[i].duration));
      bb.push_back(static_cast<double>(base_steps[i].gpu_busy));
      nb.push_back(static_cast<double>(new_steps[i].gpu_busy));
      d.steps.push_back({fmt::format("#{} -> #{}", base_steps[i].number, new_steps[i].number), 1, 1,
                         base_steps[i].duration, new_steps[i].duration});
    }
    d.gates.push_back(gate("step time (median)", median(bd), median(nd), o.threshold_pct));
    d.gates.push_back(gate("GPU busy per step (median)", median(bb), median(nb), o.threshold_pct));
  } else {
    auto span = [](const std::vector<GpuTimeline>& v) {
      int64_t s = 0;
      for (const auto& g : v) s = std::max(s, g.total);
      return static_cast<double>(s);
    };
    auto busy = [](const std::vector<GpuTimeline>& v) {
      int64_t s = 0;
      for (const auto& g : v) s += g.busy;
      return static_cast<double>(s);
    };
    d.gates.push_back(gate("GPU span (no steps)", span(d.base_timeline), span(d.new_timeline), o.threshold_pct));
    d.gates.push_back(gate("GPU busy (no steps)", busy(d.base_timeline), busy(d.new_timeline), o.threshold_pct));
  }
  const auto base_mem = peak_device_memory(b), new_mem = peak_device_memory(n);
  if (base_mem || new_mem) {
    GateResult g = gate("peak device memory", static_cast<double>(base_mem.value_or(0)), static_cast<double>(new_mem.value_or(0)),
                        o.threshold_pct);
    g.base_missing = !base_mem;
    g.new_missing = !new_mem;
    if (g.base_missing || g.new_missing) g.delta_pct = 0, g.regressed = false;
    d.gates.push_back(g);
  }
  for (const auto& g : d.gates) d.regressed |= g.regressed;

  d.categories = rows_of(category_totals(b, bt), category_totals(n, nt));
  d.ops = rows_of(op_totals(b, bt, aligned), op_totals(n, nt, aligned));
  d.kernels = rows_of(kernel_totals(b, bt, aligned), kernel_totals(n, nt, aligned));

  TreeMatcher matcher(b, bt, n, nt);
  for (size_t i = 0; i < aligned; ++i) matcher.match(bt.steps()[i].event, nt.steps()[i].event, "");
  d.tree = matcher.changes();

  // The regressions to name: the largest growths in the tree, then in GPU kernels.
  for (const auto& c : d.tree) {
    if (d.top_contributors.size() >= 3) break;
    if (c.delta <= 0) continue;
    const std::string where = (c.path.empty() ? "" : c.path + " > ") + c.name;
    d.top_contributors.push_back(c.kind == "self time"
                                     ? fmt::format("self time of {} (+{:.3f} ms)", where, static_cast<double>(c.delta) / 1e6)
                                     : fmt::format("{}: {} (+{:.3f} ms)", c.kind, where, static_cast<double>(c.delta) / 1e6));
  }
  for (const auto& k : d.kernels) {
    if (d.top_contributors.size() >= 4) break;
    if (k.delta() > 0) {
      d.top_contributors.push_back(fmt::format("GPU time of {} (+{:.3f} ms)", k.key, static_cast<double>(k.delta()) / 1e6));
      break;
    }
  }
  return d;
}

}  // namespace ttap
