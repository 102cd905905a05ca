// Rule detectors: one per catalog id (catalog.hpp), each computing the evidence for its
// anti-pattern from the events of a time range. They classify the detector's top windows,
// feed the LLM as evidence, and, over every window, make the rule-based scorer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ttap/tree.hpp"

namespace ttap {

enum class Severity : uint8_t { info, warning, error };
std::string_view severity_name(Severity s);

// Where in the user's code a finding points, from python_function frames above its events.
struct CodeLocation {
  std::string file;   // as written in the trace, e.g. "train.py"
  int line = 0;
  std::string function;
};

struct RuleFinding {
  std::string id;           // catalog id
  double confidence = 0;    // 0..1, how clearly the evidence shows the pattern
  Severity severity = Severity::warning;
  int64_t begin = 0;        // ns: where it shows (within or around the range asked)
  int64_t end = 0;
  int64_t cost = 0;         // ns of step/GPU time it plausibly costs in that range
  std::vector<std::string> evidence;  // one line each, with the figures that show it
  std::string fix;          // specific advice (the catalog's, made concrete when possible)
  std::vector<EventId> events;        // the events that show it, most telling first
  std::vector<CodeLocation> locations;  // user code, most telling first (may be empty)
};

// Runs the rule detectors. Construction precomputes what every range needs (sorted GPU
// activity, launches, per-track indices), so detect() over 100 windows stays cheap.
class RuleEngine {
 public:
  RuleEngine(const Trace& trace, const EventTree& tree);
  ~RuleEngine();
  RuleEngine(RuleEngine&&) noexcept;
  // Every detector over [begin, end) (ns). Findings sorted by confidence, then cost.
  std::vector<RuleFinding> detect(int64_t begin, int64_t end) const;
  // The rule-based scorer (`--scorer rules`): per range, the highest confidence of any
  // finding there, in [0, 1].
  std::vector<double> scores(const std::vector<std::pair<int64_t, int64_t>>& ranges) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ttap
