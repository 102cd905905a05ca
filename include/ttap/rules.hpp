// Rule detectors: one per catalog id (catalog.hpp), each computing the evidence for its
// anti-pattern from the events of a time range. They classify the detector's top windows,
// feed the LLM as evidence, and, over every window, make the rule-based scorer.
//
// The detectors live in src/rules/, one file per family (sync, transfer, host, optimizer,
// kernel, comm, compile rules, and cpu_op rules: what the kernel rules judge on CPU-only
// traces), each threshold a named constant with the reason for its value. A detector fires when its signal passes a firing threshold; its confidence is
// 0.4 there and rises linearly to 1 at a "strong" threshold (gpu_idle, the catch-all, tops
// out at 0.7). Patterns longer than a window (a host/device round trip, the eager stretch
// between two compiled regions, the idle after a sync just before the range, an idle gap
// only partly inside it) are judged on the whole pattern and reported in each range they
// reach. The primary device (the one with the most GPU time) is the one judged.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ttap/tree.hpp"

namespace ttap {

enum class Severity : uint8_t { info, warning, error };
std::string_view severity_name(Severity s);

// Severity by the share of the time a pattern costs (of a range for a window's finding, of the
// steady state across the trace): an error from a quarter, a warning from a twentieth, else
// information. The rules and the report's trace severities use the same bars.
inline constexpr double kErrorShare = 0.25;
inline constexpr double kWarningShare = 0.05;
constexpr Severity severity_for_share(double share) {
  return share >= kErrorShare ? Severity::error : share >= kWarningShare ? Severity::warning : Severity::info;
}

// Where in the user's code a finding points, from python_function frames above its events.
struct CodeLocation {
  std::string file;   // as written in the trace, e.g. "train.py"
  int line = 0;
  std::string function;
};

// A python_function frame's place: "path/file.py(123): function" -> {path/file.py, 123,
// function}; nullopt for other frames ("nn.Module: X", "<built-in function linear>"). The
// one parser of frame names; which places are the user's is each caller's filter.
std::optional<CodeLocation> parse_frame(std::string_view frame_name);

struct RuleFinding {
  std::string id;           // catalog id
  double confidence = 0;    // 0..1, how clearly the evidence shows the pattern
  // From cost over the range's length: error at 25% or more, warning at 5%, else info.
  Severity severity = Severity::warning;
  int64_t begin = 0;        // ns: where it shows (within or around the range asked)
  int64_t end = 0;
  int64_t cost = 0;         // ns of step/GPU time it plausibly costs in that range
  std::vector<std::string> evidence;  // one line each, with the figures that show it
  std::string fix;          // specific advice (the catalog's, made concrete when possible)
  std::vector<EventId> events;        // the events that show it, most telling first
  // Where its cost lies when that is not its events' own time (GPU idle gaps, sorted by
  // start): a report lists these as the pattern's occurrences, so that a cost never reads
  // larger than the places it names. Empty: the events' spans are where it lies.
  std::vector<std::pair<int64_t, int64_t>> spans;
  std::vector<CodeLocation> locations;  // user code, most telling first (may be empty)
  // Its cost lies (mostly) in CUDA graph capture: the host recording kernels into a graph,
  // which the GPU runs later on replay. One-time warm-up work, not the steady state's: info,
  // left out of the recoverable share and the what-if savings, never failing a gate. The
  // engine sets it from where the cost lies; a detector may set it for calls it knows are
  // capture work (RuleIndex::all_capture_work).
  bool one_time = false;
};

// The order findings are named in, for a window and in a report: never a less severe one
// ahead of a more severe one; among equals, the one that costs the most time (explains the
// most of the range's lost or wasted GPU time) first; confidence breaks ties. Works on
// RuleFinding and on the report's Finding alike.
template <typename F>
bool named_before(const F& a, const F& b) {
  if (a.severity != b.severity) return a.severity > b.severity;
  if (a.cost != b.cost) return a.cost > b.cost;
  return a.confidence > b.confidence;
}

// Where a finding shows together with where its cost lies: [begin, end) widened to hold its
// spans (the GPU idle after a sync runs past the call).
inline std::pair<int64_t, int64_t> cost_extent(const RuleFinding& f) {
  int64_t b = f.begin, e = f.end;
  for (const auto& [sb, se] : f.spans) b = sb < b ? sb : b, e = se > e ? se : e;
  return {b, e};
}

// The part of a finding's cost that lies inside [begin, end): all of it when it fits, else
// at most where the finding's span [f_begin, f_end) meets the range (a 20 ms kernel seen
// through a 15 ms window costs that window only what runs inside it).
inline int64_t cost_inside(int64_t cost, int64_t f_begin, int64_t f_end, int64_t begin, int64_t end) {
  const int64_t range = end > begin ? end - begin : 0;
  if (cost <= range) return cost;
  const int64_t overlap = (f_end < end ? f_end : end) - (f_begin > begin ? f_begin : begin);
  return overlap > 0 ? (overlap < range ? overlap : range) : range;
}

// Runs the rule detectors. Construction precomputes what every range needs (sorted GPU
// activity, launches, per-track indices), so detect() over 100 windows stays cheap.
class RuleEngine {
 public:
  RuleEngine(const Trace& trace, const EventTree& tree);
  ~RuleEngine();
  RuleEngine(RuleEngine&&) noexcept;
  // Every detector over [begin, end) (ns). Findings in named_before order.
  std::vector<RuleFinding> detect(int64_t begin, int64_t end) const;
  // The rule-based scorer (`--scorer rules`): per range, the highest confidence x cost
  // weight of any finding there, in [0, 1] (the weight, 1 - exp(-3 x cost share of the
  // range), ranks the costly above the merely present).
  std::vector<double> scores(const std::vector<std::pair<int64_t, int64_t>>& ranges) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ttap
