// What the rule suites share: a real trace loaded once per test process (several suites
// look at the same ones), its tree, a rule engine and 100 equal windows of its steady state.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../src/classify/classify.hpp"
#include "ttap/load.hpp"
#include "ttap/rules.hpp"
#include "ttap/tree.hpp"
#include "ttap/windows.hpp"

namespace ttap::rules_support {

struct Loaded {
  Trace trace;
  EventTree tree;
  std::unique_ptr<RuleEngine> engine;
  std::vector<std::pair<int64_t, int64_t>> windows;  // 100 equal windows of the steady state
  int64_t begin = 0, end = 0;
};

inline const Loaded& load(const std::string& path) {
  static std::map<std::string, std::unique_ptr<Loaded>> cache;
  auto& slot = cache[path];
  if (!slot) {
    slot = std::make_unique<Loaded>();
    slot->trace = load_trace(path);
    slot->tree = EventTree::build(slot->trace);
    slot->engine = std::make_unique<RuleEngine>(slot->trace, slot->tree);
    const SteadyState s = steady_state(slot->trace, slot->tree);
    slot->begin = s.begin;
    slot->end = s.end;
    const int64_t n = 100, span = std::max<int64_t>(s.end - s.begin, n);
    for (int64_t i = 0; i < n; ++i) slot->windows.emplace_back(s.begin + span * i / n, s.begin + span * (i + 1) / n);
  }
  return *slot;
}

// analyze's report on a loaded trace with the rule scorer (no model file, so no dependence on
// training) and every window flagged, so that a window-to-window difference cannot hide
// outside the top 5 and every group of findings forms.
inline TraceReport analyze_all_windows(const Loaded& l) {
  AnalyzeSettings s;
  s.score.scorer = Scorer::rules;
  s.top_k = 100;
  s.flag_spacing = 0;  // every window, neighbours included
  return analyze_trace(l.trace, l.tree, s);
}

// The trace as `analyze --scorer rules` reports it by default: the top windows, apart.
inline TraceReport analyze_default_windows(const Loaded& l) {
  AnalyzeSettings s;
  s.score.scorer = Scorer::rules;
  return analyze_trace(l.trace, l.tree, s);
}

// One window with the rules' findings in it.
struct JudgedWindow {
  int64_t begin, end;
  std::vector<RuleFinding> findings;
};

// The first finding with this id, or nullptr.
inline const RuleFinding* find_finding(const std::vector<RuleFinding>& findings, const std::string& id) {
  for (const RuleFinding& f : findings)
    if (f.id == id) return &f;
  return nullptr;
}

// Whether one of the finding's evidence lines holds `text`.
inline bool evidence_has(const RuleFinding& f, const std::string& text) {
  for (const std::string& e : f.evidence)
    if (e.find(text) != std::string::npos) return true;
  return false;
}

// Findings as text, for a failed assertion's message: id, severity, cost, evidence, fix.
inline std::string findings_text(const std::vector<RuleFinding>& findings) {
  std::string s;
  for (const RuleFinding& f : findings) {
    s += f.id + " " + std::string(severity_name(f.severity)) + " cost " + std::to_string(f.cost) + "\n";
    for (const std::string& e : f.evidence) s += "  " + e + "\n";
    s += "  fix: " + f.fix + "\n";
  }
  return s;
}

// Checks that each group of `id` whose occurrences are all listed costs no more than they
// span (1 us of rounding allowed); returns how many groups it checked.
inline size_t expect_cost_within_occurrences(const TraceReport& r, const std::string& name, const std::string& id) {
  size_t checked = 0;
  for (const GroupedFinding& g : r.findings) {
    if (g.id != id || g.occurrences.size() < g.occurrence_count) continue;
    int64_t listed = 0;
    for (const Occurrence& o : g.occurrences) listed += o.end - o.begin;
    EXPECT_LE(g.cost, listed + 1000) << name << " " << g.id << " in " << g.origin << ": " << g.occurrence_count
                                     << " occurrences of " << listed << " ns in all, cost " << g.cost << " ns";
    ++checked;
  }
  return checked;
}

// The flagged window (outside the steady-state summary) that holds `ts`, or nullptr.
inline const FlaggedWindow* flagged_window_at(const TraceReport& r, int64_t ts) {
  for (const FlaggedWindow& f : r.flagged)
    if (!f.steady_state && f.begin <= ts && ts < f.end) return &f;
  return nullptr;
}

// A flagged window's findings as text, for a failed assertion's message: id, severity, cost, evidence.
inline std::string window_text(const FlaggedWindow& w) {
  std::string s;
  for (const Finding& f : w.findings) {
    s += f.id + " " + std::string(severity_name(f.severity)) + " cost " + std::to_string(f.cost) + "\n";
    for (const std::string& e : f.evidence) s += "  " + e + "\n";
  }
  return s;
}

// ns of a duration as the rules write it ("412 us", "1.38 ms", "0.6 us").
inline int64_t ns_of(const std::string& number, const std::string& unit) {
  const double v = std::strtod(number.c_str(), nullptr);
  return static_cast<int64_t>(v * (unit == "ms" ? 1e6 : unit == "us" ? 1e3 : unit == "s" ? 1e9 : 1.0));
}

}  // namespace ttap::rules_support
