// The verdict a person reads and the gate a CI job acts on.
#include "classify.hpp"

namespace ttap {

std::optional<FailOn> parse_fail_on(std::string_view s) {
  if (s == "none") return FailOn::none;
  if (s == "warning") return FailOn::warning;
  if (s == "error") return FailOn::error;
  return std::nullopt;
}

std::string_view fail_on_name(FailOn f) {
  switch (f) {
    case FailOn::none: return "none";
    case FailOn::warning: return "warning";
    case FailOn::error: return "error";
  }
  return "none";
}

void apply_gate(TraceReport& trace, FailOn fail_on, std::optional<double> fail_score, std::optional<double> fail_savings) {
  if (trace.verdict == Verdict::error) {
    trace.gate_failed = true;  // a file that could not be judged never passes a gate
    return;
  }
  Severity worst = Severity::info;
  bool any = false;
  for (const FlaggedWindow& w : trace.flagged)
    for (const Finding& f : w.findings) {
      // An id only the LLM names has no rule evidence and no measured cost: shown, not gated on.
      // One-time capture work is shown as info, never gated on.
      if (f.source == "llm" || f.one_time) continue;
      any = true;
      worst = std::max(worst, f.severity);
    }
  // Against a baseline the gate judges only what is new or worse: a known problem that
  // did not grow does not fail every run.
  Severity gated = worst;
  bool any_gated = any;
  if (!trace.baseline.empty()) {
    gated = Severity::info;
    any_gated = false;
    for (const GroupedFinding& g : trace.findings)
      if (g.source != "llm" && !g.one_time && (g.baseline == BaselineState::added || g.baseline == BaselineState::worse)) {
        any_gated = true;
        gated = std::max(gated, g.severity);
      }
  }
  const bool score_high = fail_score && trace.score >= *fail_score;
  const bool savings_high = fail_savings && 100.0 * trace.recoverable_share >= *fail_savings;
  trace.verdict = (any && worst >= Severity::warning) || score_high ? Verdict::flagged : Verdict::clean;
  const bool severity_fails = any_gated && fail_on != FailOn::none &&
                              gated >= (fail_on == FailOn::error ? Severity::error : Severity::warning);
  trace.gate_failed = severity_fails || score_high || savings_high;
}

}  // namespace ttap
