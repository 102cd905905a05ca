// The steady state drawn as lanes, for the HTML report's timeline: each CPU thread's top
// two levels (the step and the ops under it) and each GPU stream's kernels and copies.
// Bounded for big traces: events narrower than one of `columns` pixel columns are merged
// per lane into one span that counts them, so a lane never holds much more than about
// 2 x columns spans however many events the trace has.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ttap {

struct Trace;
class EventTree;

struct LaneSpan {
  int64_t begin = 0;   // ns, trace time base
  int64_t end = 0;
  uint32_t name = 0;   // index into ReportTimeline::names: the event's name, or a merged span's longest event's
  uint32_t events = 1; // events it stands for (> 1: tiny events merged)
};

struct TimelineLane {
  std::string label;  // "GPU 0 stream 7", "thread 1234 (MainThread)", "  ops"
  bool gpu = false;
  std::vector<LaneSpan> spans;  // by begin
};

struct ReportTimeline {
  int64_t begin = 0, end = 0;  // the range drawn (the steady state)
  std::vector<std::string> names;
  std::vector<TimelineLane> lanes;  // GPU streams first, then CPU threads by busy time
  size_t events = 0;                // events in the range, before merging
};

ReportTimeline build_report_timeline(const Trace& trace, const EventTree& tree, int64_t begin, int64_t end,
                                     size_t columns = 4000, size_t max_cpu_threads = 6);

}  // namespace ttap
