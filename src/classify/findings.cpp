// Findings as reported: rule findings dressed with the catalog, what-if savings and user
// code, and the LLM's verdict folded in.
#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "classify.hpp"
#include "ttap/catalog.hpp"

namespace ttap {

namespace {

std::optional<Saving> saving_for(const std::string& id, const std::vector<Saving>& savings) {
  for (const Saving& s : savings)
    if (s.id == id) return s;
  return std::nullopt;
}

}  // namespace

Finding to_finding(const RuleFinding& rule, const Trace& trace, const EventTree& tree,
                   const std::vector<Saving>& savings, int64_t begin, int64_t end) {
  return to_finding(rule, trace, tree, savings, begin, end, finding_origin(rule, trace, tree));
}

Finding to_finding(const RuleFinding& rule, const Trace& trace, const EventTree& tree,
                   const std::vector<Saving>& savings, int64_t begin, int64_t end, std::string origin) {
  Finding f;
  f.id = rule.id;
  if (const AntiPattern* ap = find_anti_pattern(rule.id)) f.name = std::string(ap->name);
  f.severity = rule.severity;
  f.confidence = rule.confidence;
  f.source = "rules";
  // Its range holds where its cost lies too (the GPU idle after a sync, say).
  std::tie(f.begin, f.end) = cost_extent(rule);
  f.cost = rule.cost;
  f.evidence = rule.evidence;
  f.fix = rule.fix;
  if (f.fix.empty())
    if (const AntiPattern* ap = find_anti_pattern(rule.id)) f.fix = std::string(ap->fix);
  f.one_time = rule.one_time;
  // One-time capture work is not the steady state's: the step's what-if does not apply.
  if (!f.one_time) f.saving = saving_for(rule.id, savings);
  f.locations = rule.locations.empty() ? user_code_locations(trace, tree, rule.events) : rule.locations;
  clip_cost_to_range(f, begin, end);
  f.origin = std::move(origin);
  return f;
}

void clip_cost_to_range(Finding& f, int64_t begin, int64_t end) {
  const int64_t range = std::max<int64_t>(0, end - begin);
  if (f.cost <= range) return;
  // Counted beyond the range: the part inside is at most where the pattern meets the range.
  const int64_t here = cost_inside(f.cost, f.begin, f.end, begin, end);
  f.evidence.push_back(fmt::format("the whole pattern costs {:.3f} ms and spans {:.3f} ms, beyond this {:.3f} ms "
                                   "range; {:.3f} ms of it lies inside, the cost counted here",
                                   static_cast<double>(f.cost) / 1e6, static_cast<double>(f.end - f.begin) / 1e6,
                                   static_cast<double>(range) / 1e6, static_cast<double>(here) / 1e6));
  f.cost = here;
}

void merge_llm_verdict(std::vector<Finding>& findings, const LlmVerdict& verdict, const std::vector<Saving>& savings) {
  if (!verdict.ok) return;
  std::vector<std::string> named;
  for (const std::string& id : verdict.ids)
    if (is_catalog_id(id)) named.push_back(id);
  for (Finding& f : findings) {
    if (std::find(named.begin(), named.end(), f.id) != named.end()) {
      f.source = "rules+llm";
      f.explanation = verdict.explanation;
      f.confidence = std::max(f.confidence, verdict.confidence);
    } else {
      f.evidence.push_back("the LLM did not confirm this id for the window");
    }
  }
  for (const std::string& id : named) {
    if (std::any_of(findings.begin(), findings.end(), [&](const Finding& f) { return f.id == id; })) continue;
    const AntiPattern* ap = find_anti_pattern(id);
    Finding f;
    f.id = id;
    f.name = std::string(ap->name);
    f.severity = Severity::warning;
    f.confidence = verdict.confidence;
    f.source = "llm";
    f.begin = verdict.begin;
    f.end = verdict.end;
    f.fix = verdict.fix.empty() ? std::string(ap->fix) : verdict.fix;
    f.explanation = verdict.explanation;
    f.saving = saving_for(id, savings);
    findings.push_back(std::move(f));
  }
}


void assign_trace_severity(TraceReport& r, const std::vector<RuleFinding>& steady,
                           const std::map<std::string, int64_t>& over_windows) {
  const int64_t span = r.end - r.begin;
  if (span <= 0) return;
  std::map<std::string, int64_t> across, in_windows;
  // One-time capture work neither decides its id's severity nor takes one: the rest of the
  // trace is judged on what lies outside capture.
  for (const RuleFinding& rf : steady)
    if (!rf.one_time) across[rf.id] = std::max(across[rf.id], std::min(rf.cost, span));
  for (const FlaggedWindow& w : r.flagged) {
    if (w.steady_state) continue;
    std::map<std::string, int64_t> here;  // one figure per id per window: its findings may overlap
    for (const Finding& f : w.findings)
      if (f.source != "llm" && !f.one_time) here[f.id] = std::max(here[f.id], f.cost);
    for (const auto& [id, cost] : here) in_windows[id] += cost;
  }
  for (FlaggedWindow& w : r.flagged)
    for (Finding& f : w.findings) {
      if (f.one_time) {
        f.severity = Severity::info;
        continue;
      }
      const auto all = over_windows.find(f.id);
      const int64_t cost =
          std::min(span, std::max({across[f.id], in_windows[f.id], all == over_windows.end() ? int64_t{0} : all->second}));
      double share = static_cast<double>(cost) / static_cast<double>(span);
      if (const auto s = saving_for(f.id, r.savings)) share = std::max(share, s->step_share);
      f.severity = severity_for_share(share);
      f.id_share = share;
    }
  // The trace's severities can lower a window's first finding to info and raise a later
  // one: move info findings behind the others, so a window never names an info finding
  // ahead of a warning or an error. Otherwise the window's own order stands (the finding
  // that explains most of this window's time first), even where a finding of a costlier
  // pattern elsewhere in the trace now carries a higher severity.
  for (FlaggedWindow& w : r.flagged)
    std::stable_partition(w.findings.begin(), w.findings.end(), [](const Finding& f) { return f.severity != Severity::info; });
}

}  // namespace ttap
