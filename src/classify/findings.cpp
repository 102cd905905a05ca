// Findings as reported: rule findings dressed with the catalog, what-if savings and user
// code, and the LLM's verdict folded in.
#include <algorithm>

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
                   const std::vector<Saving>& savings) {
  Finding f;
  f.id = rule.id;
  if (const AntiPattern* ap = find_anti_pattern(rule.id)) f.name = std::string(ap->name);
  f.severity = rule.severity;
  f.confidence = rule.confidence;
  f.source = "rules";
  f.begin = rule.begin;
  f.end = rule.end;
  f.cost = rule.cost;
  f.evidence = rule.evidence;
  f.fix = rule.fix;
  if (f.fix.empty())
    if (const AntiPattern* ap = find_anti_pattern(rule.id)) f.fix = std::string(ap->fix);
  f.saving = saving_for(rule.id, savings);
  f.locations = rule.locations.empty() ? user_code_locations(trace, tree, rule.events) : rule.locations;
  return f;
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

}  // namespace ttap
