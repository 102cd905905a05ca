#include "ttap/collectives.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "ttap/analyze.hpp"

namespace ttap {

std::string collective_type(std::string_view raw) {
  std::string s;
  for (char c : raw)
    if (c != '_') s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.find("allreduce") != std::string::npos) return "allreduce";
  if (s.find("allgather") != std::string::npos) return "allgather";
  if (s.find("reducescatter") != std::string::npos) return "reduce_scatter";
  if (s.find("alltoall") != std::string::npos) return "alltoall";
  if (s.find("sendrecv") != std::string::npos || s == "send" || s == "recv") return "sendrecv";
  if (s.find("broadcast") != std::string::npos) return "broadcast";
  if (s.find("barrier") != std::string::npos) return "barrier";
  if (s.find("reduce") != std::string::npos) return "reduce";
  return s;
}

namespace {

// ncclKernel_AllReduce_RING_LL_Sum_float(...) / ncclDevKernel_AllGather_RING_LL(...):
// the type, then the algorithm and protocol.
void from_kernel_name(std::string_view name, std::string& type, std::string& algorithm) {
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    const size_t p = name.find(prefix);
    if (p == std::string_view::npos) continue;
    std::string_view rest = name.substr(p + prefix.size());
    rest = rest.substr(0, rest.find('('));
    std::vector<std::string_view> parts;
    for (size_t i = 0; i <= rest.size();) {
      const size_t j = std::min(rest.find('_', i), rest.size());
      parts.push_back(rest.substr(i, j - i));
      i = j + 1;
    }
    if (!parts.empty()) type = collective_type(parts[0]);
    if (parts.size() >= 3 && (parts[1] == "RING" || parts[1] == "TREE" || parts[1] == "COLLNET" || parts[1] == "NVLS"))
      algorithm = std::string(parts[1]) + " " + std::string(parts[2]);
    return;
  }
  type = collective_type(name.substr(0, name.find('(')));
}

int dtype_bytes(std::string_view dtype) {
  std::string d;
  for (char c : dtype) d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (d == "float" || d == "int" || d == "float32" || d == "int32") return 4;
  if (d == "half" || d == "bfloat16" || d == "float16" || d == "short") return 2;
  if (d == "double" || d == "long" || d == "int64" || d == "float64") return 8;
  if (d == "byte" || d == "char" || d == "bool" || d == "int8" || d == "uint8" || d.find("float8") == 0) return 1;
  return 0;
}

}  // namespace

double bus_bandwidth_factor(const std::string& type, int n) {
  if (n <= 1) return 1.0;
  const double nn = n;
  if (type == "allreduce") return 2.0 * (nn - 1) / nn;
  if (type == "allgather" || type == "reduce_scatter" || type == "alltoall") return (nn - 1) / nn;
  return 1.0;
}

std::vector<CollectiveCall> collective_calls(const Trace& t, const EventTree& tree) {
  std::vector<CollectiveCall> calls;
  NameClassifier names(t);
  for (EventId g : tree.gpu_events()) {
    if (t.category[g] != Category::Kernel || !names.communication(t.name[g])) continue;
    CollectiveCall c;
    c.start = t.ts[g];
    c.end = t.end(g);
    from_kernel_name(t.name_of(g), c.type, c.algorithm);
    c.type = collective_type_of(t, tree, g);
    for (EventId e = tree.launcher(g); e != kNoEvent; e = tree.parent(e)) {
      if (const CollectiveArgs* a = t.collective(e)) {
        const int size = dtype_bytes(t.strings.view(a->dtype));
        const int64_t nelems = std::max(a->in_msg_nelems, a->out_msg_nelems);
        if (size > 0 && nelems >= 0) c.bytes = nelems * size;
        c.group_size = a->group_size;
        break;
      }
    }
    calls.push_back(std::move(c));
  }
  return calls;
}

std::string collective_type_of(const Trace& t, const EventTree& tree, EventId g) {
  // The record_param_comms op above the launch carries the collective's metadata.
  for (EventId e = tree.launcher(g); e != kNoEvent; e = tree.parent(e))
    if (const CollectiveArgs* a = t.collective(e)) {
      if (a->collective_name != kNoString) return collective_type(t.strings.view(a->collective_name));
      break;
    }
  std::string type, algorithm;
  from_kernel_name(t.name_of(g), type, algorithm);
  return type;
}

CollectiveReport analyze_collectives(const std::vector<RankTrace>& ranks) {
  std::vector<RankCalls> calls;
  calls.reserve(ranks.size());
  for (const RankTrace& r : ranks) calls.push_back({r.rank, collective_calls(*r.trace, *r.tree)});
  return analyze_collective_calls(std::move(calls));
}

CollectiveReport analyze_collective_calls(std::vector<RankCalls> ranks) {
  CollectiveReport report;
  // Calls of each type, per rank, in time order.
  std::vector<std::map<std::string, std::vector<CollectiveCall>>> by_type(ranks.size());
  std::map<std::string, size_t> aligned;  // type -> calls present on every rank
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (auto& c : ranks[r].calls) by_type[r][c.type].push_back(std::move(c));
  }
  for (size_t r = 0; r < ranks.size(); ++r)
    for (const auto& [type, calls] : by_type[r]) aligned.try_emplace(type, SIZE_MAX);
  for (auto& [type, n] : aligned) {
    size_t lo = SIZE_MAX, hi = 0;
    for (size_t r = 0; r < ranks.size(); ++r) {
      auto it = by_type[r].find(type);
      const size_t count = it == by_type[r].end() ? 0 : it->second.size();
      lo = std::min(lo, count);
      hi = std::max(hi, count);
    }
    n = lo;
    if (lo != hi)
      report.warnings.push_back(type + ": ranks disagree on the number of calls (" + std::to_string(lo) + " to " +
                                std::to_string(hi) + "); the first " + std::to_string(lo) + " are aligned");
  }
  report.ranks.resize(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) report.ranks[r].rank = ranks[r].rank;

  std::map<std::tuple<std::string, int64_t, std::string>, CollectiveGroup> groups;
  for (const auto& [type, n] : aligned) {
    for (size_t i = 0; i < n; ++i) {
      int64_t first_start = INT64_MAX, last_start = INT64_MIN, first_end = INT64_MAX, duration = 0, bytes = -1;
      size_t last = 0;
      int32_t group_size = -1;
      for (size_t r = 0; r < ranks.size(); ++r) {
        const CollectiveCall& c = by_type[r][type][i];
        first_start = std::min(first_start, c.start);
        if (c.start > last_start) {
          last_start = c.start;
          last = r;
        }
        first_end = std::min(first_end, c.end);
        duration += c.end - c.start;
        bytes = std::max(bytes, c.bytes);
        group_size = std::max(group_size, c.group_size);
      }
      const CollectiveCall& ref = by_type[0][type][i];
      CollectiveGroup& g = groups[{type, bytes, ref.algorithm}];
      g.type = type;
      g.algorithm = ref.algorithm;
      g.bytes = bytes;
      g.ranks = group_size > 0 ? group_size : static_cast<int32_t>(ranks.size());
      ++g.calls;
      g.mean_duration += static_cast<double>(duration) / static_cast<double>(ranks.size());
      g.mean_skew += static_cast<double>(last_start - first_start);
      g.mean_transfer += static_cast<double>(std::max<int64_t>(0, first_end - last_start));
      ++report.ranks[last].last_arrivals;
      for (size_t r = 0; r < ranks.size(); ++r) {
        const int64_t wait = last_start - by_type[r][type][i].start;
        report.ranks[r].waited += wait;
        report.ranks[last].others_waited += wait;
      }
    }
  }
  for (auto& [key, g] : groups) {
    const double calls = static_cast<double>(g.calls);
    g.mean_duration /= calls;
    g.mean_skew /= calls;
    g.mean_transfer /= calls;
    if (g.bytes > 0 && g.mean_transfer > 0) {
      g.algbw_gbs = static_cast<double>(g.bytes) / g.mean_transfer;  // bytes per ns = GB/s
      g.busbw_gbs = g.algbw_gbs * bus_bandwidth_factor(g.type, g.ranks);
    }
    report.groups.push_back(g);
  }
  if (report.groups.empty())
    report.warnings.push_back("no collective kernel appears on every rank: are these the ranks of one job?");
  std::sort(report.groups.begin(), report.groups.end(), [](const CollectiveGroup& a, const CollectiveGroup& b) {
    return a.mean_duration * static_cast<double>(a.calls) > b.mean_duration * static_cast<double>(b.calls);
  });
  std::stable_sort(report.ranks.begin(), report.ranks.end(),
                   [](const RankWait& a, const RankWait& b) { return a.others_waited > b.others_waited; });
  return report;
}

}  // namespace ttap
