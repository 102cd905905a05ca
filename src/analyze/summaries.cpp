// Category, op, shape and kernel summaries: kernel time attributed to the innermost
// cpu_op above each launch (TraceLens's "direct" kernel time).
#include <algorithm>
#include <unordered_map>

#include "ttap/analyze.hpp"

namespace ttap {

namespace {

struct PairHash {
  size_t operator()(const std::pair<StringId, StringId>& p) const {
    return std::hash<uint64_t>()((uint64_t{p.first} << 32) | p.second);
  }
};

std::string view_or(const Trace& t, StringId id, std::string_view fallback) {
  return id == kNoString ? std::string(fallback) : std::string(t.strings.view(id));
}

}  // namespace

std::vector<CategoryRow> category_breakdown(const Trace& t, const EventTree& tree) {
  std::vector<CategoryRow> rows(static_cast<size_t>(OpCategory::kCount));
  std::vector<std::vector<EventId>> ops(rows.size());
  NameClassifier names(t);
  for (size_t i = 0; i < rows.size(); ++i) rows[i].category = static_cast<OpCategory>(i);
  for (EventId g : scoped_gpu_events(t, tree)) {
    const OpCategory c = names.gpu_category(tree, g);
    CategoryRow& r = rows[static_cast<size_t>(c)];
    ++r.kernel_count;
    r.kernel_time += t.dur[g];
    const EventId owner = tree.owner_op(g);
    ops[static_cast<size_t>(c)].push_back(owner == kNoEvent ? g : owner);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    auto& v = ops[i];
    std::sort(v.begin(), v.end());
    rows[i].op_count = std::unique(v.begin(), v.end()) - v.begin();
  }
  std::erase_if(rows, [](const CategoryRow& r) { return r.kernel_count == 0; });
  std::stable_sort(rows.begin(), rows.end(), [](const CategoryRow& a, const CategoryRow& b) { return a.kernel_time > b.kernel_time; });
  return rows;
}

std::vector<OpRow> ops_summary(const Trace& t, const EventTree& tree) {
  // Per op instance: its direct kernel time; then grouped by op name.
  std::unordered_map<EventId, std::pair<int64_t, int64_t>> per_instance;  // time, kernels
  for (EventId g : scoped_gpu_events(t, tree)) {
    const EventId owner = tree.owner_op(g);
    if (owner == kNoEvent) continue;
    auto& [time, kernels] = per_instance[owner];
    time += t.dur[g];
    ++kernels;
  }
  std::unordered_map<StringId, OpRow> by_name;
  for (const auto& [op, tk] : per_instance) {
    OpRow& row = by_name[t.name[op]];
    if (row.count == 0) {
      row.name = std::string(t.name_of(op));
      row.category = categorize_op(row.name);
    }
    ++row.count;
    row.direct_kernel_time += tk.first;
    row.kernel_count += tk.second;
  }
  std::vector<OpRow> rows;
  rows.reserve(by_name.size());
  for (auto& [id, row] : by_name) rows.push_back(std::move(row));
  std::sort(rows.begin(), rows.end(), [](const OpRow& a, const OpRow& b) {
    return a.direct_kernel_time != b.direct_kernel_time ? a.direct_kernel_time > b.direct_kernel_time : a.name < b.name;
  });
  return rows;
}

std::vector<ShapeRow> ops_by_shape(const Trace& t, const EventTree& tree) {
  std::vector<int64_t> kernel_time(t.size(), -1);
  for (EventId g : scoped_gpu_events(t, tree)) {
    const EventId owner = tree.owner_op(g);
    if (owner == kNoEvent) continue;
    kernel_time[owner] = std::max<int64_t>(kernel_time[owner], 0) + t.dur[g];
  }
  struct Key {
    StringId name, dims, types;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()((uint64_t{k.name} << 40) ^ (uint64_t{k.dims} << 20) ^ k.types);
    }
  };
  std::unordered_map<Key, ShapeRow, KeyHash> groups;
  for (EventId e = 0; e < t.size(); ++e) {
    if (kernel_time[e] < 0) continue;  // only ops that launched GPU work
    const OpArgs* a = t.op(e);
    const Key key{t.name[e], a ? a->input_dims : kNoString, a ? a->input_types : kNoString};
    ShapeRow& row = groups[key];
    if (row.count == 0) {
      row.name = std::string(t.name_of(e));
      row.input_dims = view_or(t, key.dims, "");
      row.input_types = view_or(t, key.types, "");
    }
    ++row.count;
    row.kernel_time += kernel_time[e];
    row.cpu_time += t.dur[e];
  }
  std::vector<ShapeRow> rows;
  rows.reserve(groups.size());
  for (auto& [k, row] : groups) rows.push_back(std::move(row));
  std::sort(rows.begin(), rows.end(), [](const ShapeRow& a, const ShapeRow& b) {
    if (a.kernel_time != b.kernel_time) return a.kernel_time > b.kernel_time;
    if (a.name != b.name) return a.name < b.name;
    return a.input_dims < b.input_dims;
  });
  return rows;
}

std::vector<KernelRow> kernel_summary(const Trace& t, const EventTree& tree) {
  std::unordered_map<std::pair<StringId, StringId>, KernelRow, PairHash> groups;
  NameClassifier names(t);
  for (EventId g : scoped_gpu_events(t, tree)) {
    const EventId owner = tree.owner_op(g);
    const StringId owner_name = owner == kNoEvent ? kNoString : t.name[owner];
    KernelRow& row = groups[{t.name[g], owner_name}];
    if (row.count == 0) {
      row.name = std::string(t.name_of(g));
      row.owner_op = view_or(t, owner_name, "");
      row.category = names.gpu_category(tree, g);
      row.min = t.dur[g];
      row.max = t.dur[g];
    }
    ++row.count;
    row.total += t.dur[g];
    row.min = std::min(row.min, t.dur[g]);
    row.max = std::max(row.max, t.dur[g]);
  }
  std::vector<KernelRow> rows;
  rows.reserve(groups.size());
  for (auto& [k, row] : groups) rows.push_back(std::move(row));
  std::sort(rows.begin(), rows.end(), [](const KernelRow& a, const KernelRow& b) {
    if (a.total != b.total) return a.total > b.total;
    if (a.name != b.name) return a.name < b.name;
    return a.owner_op < b.owner_op;
  });
  return rows;
}

}  // namespace ttap
