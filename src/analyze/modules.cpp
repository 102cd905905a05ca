#include "ttap/modules.hpp"

#include <algorithm>
#include <map>

#include "ttap/analyze.hpp"

namespace ttap {

namespace {
constexpr std::string_view kModulePrefix = "nn.Module: ";
}

ModuleTree module_tree(const Trace& t, const EventTree& tree) {
  ModuleTree m;
  m.nodes.push_back({"(all GPU work)", -1, {}, 0, 0, 0, 0});
  std::map<std::pair<int32_t, std::string_view>, int32_t> child_of;  // (parent node, name) -> node
  // Module node of every CPU event, computed once per event: parents first.
  StoreVector<int32_t> node_of(t.size(), -1);
  std::vector<EventId> chain;
  auto resolve = [&](EventId e) {
    if (node_of[e] >= 0) return node_of[e];
    chain.clear();
    for (EventId c = e; c != kNoEvent && node_of[c] < 0; c = tree.parent(c)) chain.push_back(c);
    int32_t node = chain.empty() || tree.parent(chain.back()) == kNoEvent ? 0 : node_of[tree.parent(chain.back())];
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const EventId c = *it;
      const std::string_view name = t.name_of(c);
      if (t.category[c] == Category::PythonFunction && name.substr(0, kModulePrefix.size()) == kModulePrefix) {
        const std::string_view module = name.substr(kModulePrefix.size());
        auto [found, inserted] = child_of.try_emplace({node, module}, static_cast<int32_t>(m.nodes.size()));
        if (inserted) {
          m.nodes.push_back({std::string(module), node, {}, 0, 0, 0, 0});
          m.nodes[node].children.push_back(found->second);
          m.has_modules = true;
        }
        node = found->second;
        ++m.nodes[node].calls;
      }
      node_of[c] = node;
    }
    return node;
  };
  for (EventId g : scoped_gpu_events(t, tree)) {
    const EventId l = tree.launcher(g);
    const int32_t node = l == kNoEvent ? 0 : resolve(l);
    m.nodes[node].self_time += t.dur[g];
    m.total_gpu_time += t.dur[g];
    for (int32_t n = node; n >= 0; n = m.nodes[n].parent) {
      m.nodes[n].gpu_time += t.dur[g];
      ++m.nodes[n].kernels;
    }
  }
  for (auto& n : m.nodes)
    std::sort(n.children.begin(), n.children.end(),
              [&m](int32_t a, int32_t b) { return m.nodes[a].gpu_time > m.nodes[b].gpu_time; });
  return m;
}

}  // namespace ttap
