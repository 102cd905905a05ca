// build_report_timeline: the lanes of the HTML report's timeline (see report_timeline.hpp).
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "ttap/report_timeline.hpp"
#include "ttap/tree.hpp"

namespace ttap {

namespace {

// Adds events (sorted by start) to a lane, merging those narrower than `column` with a
// merged neighbour less than a column away: the page draws one block for them, as a
// pixel could show no more.
class LaneBuilder {
 public:
  LaneBuilder(const Trace& t, ReportTimeline& out, int64_t begin, int64_t end, int64_t column)
      : t_(t), out_(out), begin_(begin), end_(end), column_(std::max<int64_t>(1, column)) {}

  void add(TimelineLane& lane, EventId e) {
    const int64_t b = std::max(begin_, t_.ts[e]), en = std::min(end_, t_.end(e));
    if (en <= b) return;  // outside the range, or an instant: nothing to draw
    ++out_.events;
    auto& spans = lane.spans;
    const bool tiny = en - b < column_;
    if (tiny && merging_ && !spans.empty() && b - spans.back().end < column_) {
      LaneSpan& s = spans.back();
      if (en - b > longest_) longest_ = en - b, s.name = name(e);
      s.end = std::max(s.end, en);
      ++s.events;
      return;
    }
    spans.push_back({b, en, name(e), 1});
    merging_ = tiny;
    longest_ = en - b;
  }
  void new_lane() { merging_ = false; }

 private:
  uint32_t name(EventId e) {
    auto [it, inserted] = ids_.try_emplace(t_.name[e], static_cast<uint32_t>(out_.names.size()));
    if (inserted) out_.names.emplace_back(t_.name_of(e));
    return it->second;
  }
  const Trace& t_;
  ReportTimeline& out_;
  int64_t begin_, end_, column_;
  bool merging_ = false;
  int64_t longest_ = 0;
  std::unordered_map<StringId, uint32_t> ids_;
};

// The thread's own name when the trace gives one (Kineto's already reads "thread 25738
// (python)"), else "thread TID".
std::string thread_label(const Trace& t, const Track& tr) {
  if (tr.thread_name != kNoString && !t.strings.view(tr.thread_name).empty()) return std::string(t.strings.view(tr.thread_name));
  return "thread " + (tr.tid_label != kNoString ? std::string(t.strings.view(tr.tid_label)) : std::to_string(tr.tid));
}

}  // namespace

ReportTimeline build_report_timeline(const Trace& t, const EventTree& tree, int64_t begin, int64_t end, size_t columns,
                                     size_t max_cpu_threads) {
  ReportTimeline out;
  out.begin = begin;
  out.end = end;
  if (end <= begin) return out;
  LaneBuilder lanes(t, out, begin, end, (end - begin) / static_cast<int64_t>(std::max<size_t>(1, columns)));
  auto overlaps = [&](EventId e) { return t.ts[e] < end && t.end(e) > begin; };

  // GPU streams, by device and stream.
  std::vector<size_t> gpu_tracks;
  for (size_t k = 0; k < tree.gpu_by_track().size(); ++k)
    if (!tree.gpu_by_track()[k].empty()) gpu_tracks.push_back(k);
  std::sort(gpu_tracks.begin(), gpu_tracks.end(), [&](size_t a, size_t b) {
    return std::pair(t.tracks[a].device, t.tracks[a].stream) < std::pair(t.tracks[b].device, t.tracks[b].stream);
  });
  for (size_t k : gpu_tracks) {
    TimelineLane lane{fmt::format("GPU {} stream {}", t.tracks[k].device, t.tracks[k].stream), true, {}};
    lanes.new_lane();
    for (EventId g : tree.gpu_by_track()[k])
      if (overlaps(g)) lanes.add(lane, g);
    if (!lane.spans.empty()) out.lanes.push_back(std::move(lane));
  }

  // CPU threads with the most time in their top-level events, two levels each.
  std::vector<std::pair<int64_t, size_t>> busy;
  for (size_t k = 0; k < tree.roots_by_track().size(); ++k) {
    int64_t ns = 0;
    for (EventId r : tree.roots_by_track()[k])
      if (overlaps(r)) ns += std::min(end, t.end(r)) - std::max(begin, t.ts[r]);
    if (ns > 0 && !t.tracks[k].gpu) busy.emplace_back(ns, k);
  }
  std::sort(busy.begin(), busy.end(), [](auto& a, auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (busy.size() > max_cpu_threads) busy.resize(max_cpu_threads);
  for (auto [ns, k] : busy) {
    TimelineLane top{thread_label(t, t.tracks[k]), false, {}}, below{"  under it", false, {}};
    std::vector<EventId> children;
    lanes.new_lane();
    for (EventId r : tree.roots_by_track()[k]) {
      if (!overlaps(r)) continue;
      lanes.add(top, r);
      for (EventId c : tree.children(r))
        if (!is_gpu_activity(t.category[c]) && overlaps(c)) children.push_back(c);
    }
    lanes.new_lane();
    std::sort(children.begin(), children.end(), [&](EventId a, EventId b) { return t.ts[a] < t.ts[b]; });
    for (EventId c : children) lanes.add(below, c);
    out.lanes.push_back(std::move(top));
    if (!below.spans.empty()) out.lanes.push_back(std::move(below));
  }
  return out;
}

}  // namespace ttap
